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
