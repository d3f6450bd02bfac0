"""The sweeps wing: the sweep file (:mod:`~verify.sweeps.spec`), the results file (:mod:`~verify.sweeps.results`),
running tasks (:mod:`~verify.sweeps.run`) on an executor (:mod:`~verify.sweeps.executors`), and summaries
(:mod:`~verify.sweeps.report`)."""
