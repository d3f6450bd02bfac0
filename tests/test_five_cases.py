"""The five cases study (verify.studies.five_cases): its bulk case compares each spectrum with the model's law."""
import pytest

from verify.studies import five_cases


@pytest.mark.slow  # the model's law at T = 2 as a distribution: about a minute
def test_bulk_case_measures_each_spectrum_against_both_laws():
    # the loop's sized Model had taken the name of the model's law, and ks_distance was handed the Model (TypeError)
    out = five_cases.bulk_case(2, "mean", None, "1", "1", [40], 2)
    row = out["rows"][0]
    assert row["d"] == 40 and len(row["ks_model_times_d"]) == len(row["ks_ge_times_d"]) == 2
    assert all(0 < x <= 40 for x in row["ks_model_times_d"] + row["ks_ge_times_d"])
