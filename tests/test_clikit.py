"""The command-line plumbing when its reader goes away."""
import subprocess
import sys

import processes


def test_a_reader_that_stops_early_gets_no_traceback():
    # like `derive spike ... --json | head -c 0`: the reader is gone before the document is written
    # (the interpreter takes far longer to start than this close)
    proc = subprocess.Popen([sys.executable, "-m", "derive.cli", "spike", "--delta", "1/2", "--gamma", "1/4", "--alpha",
                             "7/32", "--kappa", "1/8", "--mu2", "3/2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = processes.communicate(proc, cpu=300)
    err = err.decode()
    assert proc.returncode in (0, 1)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_values_that_start_with_a_minus_sign_are_values(capsys):
    # argparse takes "-1,2" for an option unless the parser knows it is a number list (a Hypothesis example of
    # tests/test_fuzz.py found --x -1,2 refused with "expected one argument")
    import json

    from derive.cli import main

    assert main(["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "-1,2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["density"][0] == "0"
    assert main(["spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "1/4", "--kappa", "1/8", "--mu2", "1",
                 "--sum-w", "-1/2", "--json"]) == 0
    capsys.readouterr()
    assert main(["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "-abc", "--json"]) == 2
