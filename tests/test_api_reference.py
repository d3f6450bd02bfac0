"""The API reference (notes/api.md) is built from the docstrings with every warning an error, and the committed copy
is the one they give now."""
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_api_reference_builds_without_warnings_and_is_current(script):
    apidoc = script("apidoc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = apidoc.reference()
    assert (ROOT / "notes" / "api.md").read_text() == text, "notes/api.md is stale: run python scripts/apidoc.py"
    for package in ("derive", "verify"):
        for name in __import__(package).__all__:
            if name != "__version__":
                assert f"#### `{package}.{name}" in text, name


def test_a_public_name_without_a_docstring_fails_the_build(monkeypatch, script):
    from derive.model.spec import Model

    apidoc = script("apidoc")
    monkeypatch.setattr(Model, "__doc__", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            apidoc.reference()
        except apidoc.MissingDocstring as exc:
            assert "derive.Model" in str(exc)
        else:
            raise AssertionError("a missing docstring went unnoticed")
