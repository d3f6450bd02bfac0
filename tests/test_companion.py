"""What a paper companion carries: a licence that is the one pyproject declares, a citation of the tool and of the
paper, a changelog, type information shipped with the packages."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_licence_citation_changelog_and_type_information():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == {"text": "MIT"}
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "MIT"
    assert cff["version"] == project["project"]["version"]
    paper, = cff["references"]
    assert paper["title"].startswith("How Does Attention Help?") and paper["year"] == 2026
    assert paper["authors"][0]["family-names"] == "Seddik" and "2605.06826" in paper["url"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{project['project']['version']}]" in changelog and "## [Unreleased]" in changelog
    data = project["tool"]["setuptools"]["package-data"]
    for package in ("derive", "verify"):
        assert data[package] == ["py.typed"] and (ROOT / package / "py.typed").exists()


def test_readme_says_how_to_cite():
    text = (ROOT / "README.md").read_text()
    assert "CITATION.cff" in text and re.search(r"arXiv 2605\.06826", text)
