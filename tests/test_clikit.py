"""The command-line plumbing when its reader goes away."""
import subprocess
import sys


def test_a_reader_that_stops_early_gets_no_traceback():
    # like `derive spike ... --json | head -c 0`: the reader is gone before the document is written
    # (the interpreter takes far longer to start than this close)
    proc = subprocess.Popen([sys.executable, "-m", "derive.cli", "spike", "--delta", "1/2", "--gamma", "1/4", "--alpha",
                             "7/32", "--kappa", "1/8", "--mu2", "3/2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 1)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
