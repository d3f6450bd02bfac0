"""The Monte Carlo benchmark still runs end to end (tiny sizes; nothing is timed or compared to a speed)."""
from verify import bench_mc


def test_tiny_benchmark_writes_its_tables(tmp_path, capsys):
    out = tmp_path / "bench.md"
    assert bench_mc.main(["--tiny", "--threads", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert capsys.readouterr().out.strip() == text.strip()
    ladder, _, big = bench_mc.MODES["tiny"]
    for d in ladder:
        assert f"\n| {d} |" in text
    assert "Machine:" in text and "BLAS threads: 1;" in text and "dense: p =" in text and "implicit: p =" in text and "implicit-f32: p =" in text
    assert f"d = {big}, V = {2 * big}, N = {4 * big}" in text
