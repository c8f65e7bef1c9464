"""What the wheel ships (pyproject.toml's [tool.setuptools]): every folder of the package, as a
package setuptools was told of (else it is left out of the install, or warned about), and every
file in them that is not code (the price table, the hook scripts, the web assets)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def folders() -> dict[str, Path]:
    """Each package the wheel is to hold, by name, and the folder it is built from."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped: dict[str, str] = config.get("package-dir", {})
    out: dict[str, Path] = {}
    for name in config["packages"]:
        parent = name
        while parent not in mapped and "." in parent:
            parent = parent.rpartition(".")[0]
        base = REPO / mapped[parent] if parent in mapped else REPO
        rest = name.removeprefix(parent) if parent in mapped else name
        out[name] = base.joinpath(*rest.strip(".").split(".")) if rest else base
    return out


def walk(root: Path) -> list[Path]:
    """Everything under `root` but bytecode caches."""
    return [p for p in root.rglob("*") if "__pycache__" not in p.parts]


def test_every_folder_of_the_package_and_of_its_files_is_a_listed_package() -> None:
    listed = folders()
    missing = {p for p in listed.values() if not p.is_dir()}
    assert missing == set(), "listed, but no such folder"
    roots = [REPO / "purplemux", REPO / "hooks", REPO / "web"]
    found = {p for root in roots for p in [root, *walk(root)] if p.is_dir()}
    unlisted = sorted(str(p.relative_to(REPO)) for p in found - set(listed.values()))
    assert unlisted == [], "add these to packages"


def test_every_file_that_is_not_code_ships_as_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    data: dict[str, list[str]] = config["package-data"]
    left_out = [
        str(file.relative_to(REPO))
        for name, folder in folders().items()
        for file in folder.iterdir()
        if file.is_file() and file.suffix != ".py"
        if not any(fnmatch.fnmatch(file.name, glob) for glob in data.get(name, []))
    ]
    assert left_out == [], "add these to package-data"
    shipped = {str(f.relative_to(REPO)) for d in folders().values() for f in d.iterdir()}
    assert {"purplemux/data/prices.json", "hooks/status-hook.sh", "web/static/sw.js"} <= shipped
