"""What the README's "When things go wrong" says of a job that fails: locally
(``profiles/default``) it is not retried; the cluster profiles resubmit it
(``retries``), every attempt with more memory and time, whether its rule
states its resources (``workflow/rules/*.smk``) or takes the profile's
defaults."""

import re

import pytest
import yaml

from ..conftest import REPO

CLUSTER_PROFILES = ("profiles/slurm/config.v8+.yaml", "profiles/generic/config.v8+.yaml")
SCALED = ("mem_mb", "runtime")


def profile(path: str) -> dict:
    return yaml.safe_load((REPO / path).read_text())


def when_things_go_wrong() -> str:
    readme = (REPO / "README.md").read_text()
    return readme.split("## When things go wrong", 1)[1].split("\n## ", 1)[0]


def test_the_readme_states_the_profiles_retries():
    text = " ".join(when_things_go_wrong().split())
    assert "retries" not in profile("profiles/default/config.yaml")
    assert "`profiles/default` sets no retries" in text
    for path in CLUSTER_PROFILES:
        retries = profile(path)["retries"]
        assert retries >= 1, path
        assert f"(`retries: {retries}`)" in text, path


@pytest.mark.parametrize("path", CLUSTER_PROFILES)
def test_cluster_profile_defaults_grow_with_the_attempt(path):
    """The fallback of the rules that state no resources (normalise, split,
    weights_figure): an expression in ``attempt``, as Snakemake evaluates it."""
    defaults = profile(path)["default-resources"]
    for name in SCALED:
        first, second = (eval(str(defaults[name]), {"attempt": a}) for a in (1, 2))
        assert second > first > 0, f"{path}: {name} = {defaults[name]!r}"


def rule_resources() -> dict[str, dict[str, str]]:
    """Each rule's ``resources:`` entries as written (name -> expression)."""
    found = {}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for rule, body in re.findall(
            r"^(?:rule|checkpoint) (\w+):\n(.*?)(?=^\S|\Z)", smk.read_text(), flags=re.M | re.S
        ):
            block = re.search(r"^    resources:\n((?:        .*\n)+)", body, flags=re.M)
            if block:
                entries = re.findall(r"^        (\w+)=(.*?),?$", block.group(1), flags=re.M)
                found[rule] = dict(entries)
    return found


def test_stated_resources_grow_with_the_attempt():
    """Every resource a rule states is a lambda of ``attempt`` or a function of
    common.smk taking it (test_machinery.py checks those functions' growth)."""
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    functions = {
        name: [p.strip() for p in params.split(",")]
        for name, params in re.findall(r"^def (\w+)\(([^)]*)\)", common, flags=re.M)
    }
    resources = rule_resources()
    assert {"kernels", "cv_chunk", "fit", "timing_point"} <= set(resources)
    for rule, entries in resources.items():
        assert set(SCALED) <= set(entries), rule
        for name, expression in entries.items():
            if expression.startswith("lambda"):
                params = expression.split(":", 1)[0].removeprefix("lambda").split(",")
                assert "attempt" in [p.strip() for p in params], (rule, name, expression)
                grow = [eval(expression)(None, attempt=a) for a in (1, 2)]
                assert grow[1] > grow[0], (rule, name)
            else:
                assert "attempt" in functions[expression], (rule, name, expression)
