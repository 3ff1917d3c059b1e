"""Experiment files resolved: sweeps expanded, per-dataset overrides, fit jobs,
cross-reference checks; every shipped experiment file passes them."""

import jsonschema
import pytest
import yaml

from mkl.workflow import experiment

from ..conftest import REPO

BASE = {
    "name": "demo",
    "datasets": ["a", "b"],
    "protocol": {"repetitions": 3, "train_fraction": 0.5, "inner_folds": 3, "seed": 0},
    "kernels": {"families": [{"family": "linear"}]},
    "algorithms": {
        "uniform": {"grid": {"C": [1, 10]}},
        "gmkl_v": {
            "estimator": "gmkl",
            "datasets": ["a"],
            "params": {"tol": 0.01},
            "sweep": {"v": [0.0, 0.25, 1.0]},
            "grid": {"C": [1]},
        },
    },
    "overrides": {
        "b": {"protocol": {"repetitions": 2, "train_fraction": 0.1}},
        "a": {
            "algorithms": {
                "uniform": {"grid": {"C": [100]}, "params": {"tol": 0.1}},
                "gmkl_v": {"params": {"v": 0.9, "tol": 0.5}, "grid": {"C": [5, 50]}},
            }
        },
    },
}


def test_sweep_expands_to_one_entry_per_value_in_order():
    exp = experiment.expand(BASE)
    assert list(exp["algorithms"]) == ["uniform", "gmkl_v_0", "gmkl_v_0p25", "gmkl_v_1"]
    entry = exp["algorithms"]["gmkl_v_0p25"]
    assert entry["estimator"] == "gmkl"
    assert entry["params"] == {"tol": 0.01, "v": 0.25}
    assert entry["grid"] == {"C": [1]} and entry["datasets"] == ["a"]
    assert (entry["sweep_of"], entry["sweep_param"], entry["sweep_value"]) == ("gmkl_v", "v", 0.25)
    assert experiment.sweep_members(exp, "gmkl_v") == [
        ("gmkl_v_0", 0.0),
        ("gmkl_v_0p25", 0.25),
        ("gmkl_v_1", 1.0),
    ]
    assert experiment.table_algorithms(exp) == ["uniform"]
    assert experiment.expand(exp) == exp  # idempotent
    assert "sweep" in BASE["algorithms"]["gmkl_v"]  # the input is not modified


@pytest.mark.parametrize(
    "value, name", [(1e-4, "k_0p0001"), (1000.0, "k_1000"), (1e6, "k_1e06"), (-2, "k_m2")]
)
def test_sweep_names_are_wildcard_safe(value, name):
    assert experiment.sweep_name("k", value) == name


@pytest.mark.parametrize(
    "change, message",
    [
        ({"sweep": {"v": [0.1], "tau": [0.3]}}, "exactly one parameter"),
        ({"sweep": {"C": [1, 2]}}, "both swept and in the grid"),
        ({"sweep": {"v": ["a/b"]}}, "cannot be part of a file name"),
    ],
)
def test_bad_sweeps_are_refused(change, message):
    bad = yaml.safe_load(yaml.safe_dump(BASE))
    bad["algorithms"]["gmkl_v"].update(change)
    with pytest.raises(ValueError, match=message):
        experiment.expand(bad)


def test_overrides_and_fit_jobs():
    exp = experiment.expand(BASE)
    assert experiment.protocol(exp, "a")["train_fraction"] == 0.5
    assert experiment.protocol(exp, "b") == {
        "repetitions": 2,
        "train_fraction": 0.1,
        "inner_folds": 3,
        "seed": 0,
    }
    assert experiment.kernels(exp, "b") == BASE["kernels"]
    jobs = experiment.fit_jobs(exp)
    # a: (uniform + 3 sweep points) x 3 splits; b: uniform x 2 splits (sweep restricted to a)
    assert len(jobs) == 4 * 3 + 2
    assert ("b", "gmkl_v_0", 0) not in jobs and ("b", "uniform", 1) in jobs
    assert ("b", "uniform", 2) not in jobs
    assert experiment.fit_jobs(exp, ["b"]) == [("b", "uniform", 0), ("b", "uniform", 1)]
    assert experiment.runs_on(exp, "gmkl_v_1", "a") and not experiment.runs_on(exp, "gmkl_v_1", "b")


def test_fit_batches_cover_every_split_once():
    assert experiment.split_batches(5, 2) == [(0, 1), (2, 3), (4, 4)]
    assert experiment.split_batches(3, 1) == [(0, 0), (1, 1), (2, 2)]
    assert experiment.split_batches(3, 10) == [(0, 2)]
    with pytest.raises(ValueError, match="splits_per_job"):
        experiment.split_batches(3, 0)
    exp = experiment.expand(BASE)
    batches = experiment.fit_batches(exp, per_job=2)
    covered = [(ds, alg, s) for ds, alg, a, b in batches for s in range(a, b + 1)]
    assert covered == experiment.fit_jobs(exp)
    assert ("a", "uniform", 2, 2) in batches and ("b", "uniform", 0, 1) in batches


def test_algorithm_overrides_per_dataset():
    exp = experiment.expand(BASE)
    assert experiment.algorithm(exp, "uniform", "b") == {"grid": {"C": [1, 10]}}
    assert experiment.algorithm(exp, "uniform", "a") == {
        "grid": {"C": [100]},
        "params": {"tol": 0.1},
    }
    point = experiment.algorithm(exp, "gmkl_v_0p25", "a")
    # the sweep's override applies to its points, but the swept value wins
    assert point["params"] == {"tol": 0.5, "v": 0.25} and point["grid"] == {"C": [5, 50]}
    assert experiment.algorithm(exp, "gmkl_v_0p25", "b")["params"] == {"tol": 0.01, "v": 0.25}
    assert "tol" in exp["algorithms"]["gmkl_v_0p25"]["params"]  # the experiment is untouched
    bad = yaml.safe_load(yaml.safe_dump(BASE))
    bad["overrides"]["a"]["algorithms"]["nope"] = {"params": {}}
    with pytest.raises(ValueError, match="names algorithm 'nope'"):
        experiment.check(experiment.expand(bad))


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("overrides",), {"zzz": {}}, "override for 'zzz'"),
        (("algorithms", "uniform", "datasets"), ["zzz"], "names dataset 'zzz'"),
        (("figures",), {"results": {"dataset": "a", "series": {}}}, "'results' is taken"),
        (
            ("figures",),
            {"f": {"kind": "sweep", "sweep": "nope", "datasets": ["a"], "metrics": ["accuracy"]}},
            "names no sweep",
        ),
        (
            ("figures",),
            {"f": {"kind": "datasets", "datasets": {"a": 1}, "algorithms": ["x"], "metrics": []}},
            "names algorithm 'x'",
        ),
        (
            ("figures",),
            {"f": {"dataset": "zzz", "series": {"s": {"algorithm": "uniform"}}}},
            "uses dataset 'zzz'",
        ),
        (("algorithms", "uniform", "grid"), {"c": [1, 10]}, r"sets \['c'\], not parameters"),
        (
            ("algorithms", "gmkl_v", "params"),
            {"tol": 0.1, "nu": 1},
            r"'gmkl_v_0' \(gmkl\) on 'a' sets \['nu'\]",
        ),
        (
            ("overrides", "a", "algorithms", "uniform", "params"),
            {"max_iters": 5},
            r"'uniform' \(uniform\) on 'a' sets \['max_iters'\]",
        ),
        (
            ("figures",),
            {"f": {"dataset": "a", "series": {"s": {"algorithm": "uniform", "params": {"k": 1}}}}},
            r"in figure 'f', series 's' sets \['k'\]",
        ),
        (
            ("paper",),
            {"name": "p", "metric": ["accuracy", "f1"], "paper_metric": "acc", "tables": {}},
            "paper_metric renames a single metric",
        ),
        (
            ("paper",),
            {
                "name": "p",
                "tables": {"t": ["a"]},
                "datasets": {"a": "A"},
                "methods": {"uniform": "u"},
                "cell_status": {"a": "different target: named by our name, not the paper's"},
            },
            r"cell_status names \['a'\], not among the paper's datasets its tables map \(A\)",
        ),
    ],
)
def test_check_names_the_bad_reference(path, value, message):
    bad = yaml.safe_load(yaml.safe_dump(BASE))
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError, match=message):
        experiment.check(experiment.expand(bad))


SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "experiment.schema.yaml").read_text())
REGISTRY = yaml.safe_load((REPO / "config" / "datasets.yaml").read_text())


def test_a_cell_status_says_which_and_why():
    exp = yaml.safe_load(yaml.safe_dump(BASE))
    exp["paper"] = {"name": "p", "tables": {"t": ["a"]}, "methods": {"uniform": "u"}}
    for status in ("different target: the mirror's label is another", "not identifiable: x" * 3):
        exp["paper"]["cell_status"] = {"a": status}
        jsonschema.validate(exp, SCHEMA)
    for status in ("different", "ok: fine", "not identifiable:"):
        exp["paper"]["cell_status"] = {"a": status}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(exp, SCHEMA)


@pytest.mark.parametrize(
    "path", sorted((REPO / "config" / "experiments").glob("*.yaml")), ids=lambda p: p.stem
)
def test_shipped_experiments_validate_and_resolve(path):
    exp = yaml.safe_load(path.read_text())
    jsonschema.validate(exp, SCHEMA)
    exp = experiment.expand(exp)
    experiment.check(exp)
    assert set(exp["datasets"]) <= set(REGISTRY)
    for spec in exp.get("figures", {}).values():
        assert spec.get("dataset", exp["datasets"][0]) in REGISTRY
    assert experiment.fit_jobs(exp)


def test_the_groupings_study_runs_the_memo_protocol_and_stays_out_of_the_fidelity_report():
    """lauriola2018_memo_groupings differs from lauriola2018_memo only in its
    datasets: every candidate grouping of iris and vowel is compared with the
    paper's cell in its own table, never in the fidelity report."""
    from mkl.workflow.fidelity import experiment_order

    def load(name):
        return yaml.safe_load((REPO / "config" / "experiments" / f"{name}.yaml").read_text())

    memo, study = load("lauriola2018_memo"), load("lauriola2018_memo_groupings")
    for key in ("protocol", "kernels", "algorithms", "execution"):
        assert study[key] == memo[key], key
    section = study["paper"]
    assert section["fidelity"] is False
    # (cell_status qualifies the fidelity report's cells, which the study never supplies)
    assert {k: v for k, v in section.items() if k not in ("fidelity", "tables", "datasets")} == {
        k: v for k, v in memo["paper"].items() if k not in ("tables", "datasets", "cell_status")
    }
    assert section["tables"]["table1"] == study["datasets"]
    assert {section["datasets"][ds] for ds in study["datasets"]} == {"iris", "vowel"}
    # the rule's groupings are lauriola2018_memo's own datasets
    assert {"iris_bin", "vowel_bin"} <= set(study["datasets"]) & set(memo["datasets"])
    assert experiment_order({"memo": memo, "study": study}) == ["memo"]


def test_cell_status_names_a_known_status_and_its_reason():
    """paper.cell_status: "different target: ..." or "not identifiable: ...",
    a reason after the colon; lauriola2018_memo so marks duke and vowel."""
    exp = yaml.safe_load(yaml.safe_dump(BASE))
    exp["paper"] = {"name": "p", "tables": {"t": ["a"]}, "methods": {"uniform": "avg"}}
    for status in ("different target: other labels", "not identifiable: grouping unknown"):
        exp["paper"]["cell_status"] = {"a": status}
        jsonschema.validate(exp, SCHEMA)
    for status in ("different target", "not identifiable:", "data limit: small", "ok: fine"):
        exp["paper"]["cell_status"] = {"a": status}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(exp, SCHEMA)
    memo = yaml.safe_load((REPO / "config" / "experiments" / "lauriola2018_memo.yaml").read_text())
    statuses = memo["paper"]["cell_status"]
    assert set(statuses) == {"duke", "vowel"}
    assert statuses["duke"].startswith("different target: ")
    assert statuses["vowel"].startswith("not identifiable: ")


def test_schema_requires_each_figure_kinds_fields():
    exp = yaml.safe_load(yaml.safe_dump(BASE))
    exp["figures"] = {"t": {"kind": "timing", "dataset": "a", "series": {"s": {"algorithm": "u"}}}}
    with pytest.raises(jsonschema.ValidationError, match="vary"):
        jsonschema.validate(exp, SCHEMA)
    exp["figures"] = {"s": {"kind": "sweep", "sweep": "gmkl_v"}}
    with pytest.raises(jsonschema.ValidationError, match="datasets"):
        jsonschema.validate(exp, SCHEMA)


TIMING = {
    "kind": "timing",
    "dataset": "a",
    "vary": "rank",
    "values": [10, 20, "dense"],
    "n": 50,
    "kernels": 2,
    "widths": [1.0, 4.0],
    "repetitions": 1,
    "representation": "nystroem",
    "series": {"sum": {"algorithm": "uniform", "params": {"C": 1}}},
}


def _with_figures(**figures):
    exp = yaml.safe_load(yaml.safe_dump(BASE))
    exp["algorithms"]["memo"] = {"estimator": "memo", "grid": {"C": [1]}}
    exp["figures"] = figures
    return exp


def test_timing_figures_on_factors_validate():
    dense_n = {**TIMING, "vary": "n", "values": [40, 60], "representation": "dense"}
    factored_n = {**dense_n, "representation": {"kind": "rff", "dimension": 30}}
    exp = _with_figures(r=TIMING, d=dense_n, f={**factored_n, "compare_with": "d"})
    jsonschema.validate(exp, SCHEMA)
    experiment.check(experiment.expand(exp))


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"values": ["dense"], "vary": "n", "representation": "dense"},
            "point 'dense'.*only in a figure with vary: rank",
        ),
        ({"representation": "dense"}, "needs a nystroem or rff representation"),
        ({"series": {"m": {"algorithm": "memo", "params": {"C": 1}}}}, "memo.*needs dense"),
        (
            {"series": {"x": {"algorithm": "nope", "params": {"C": 1}}}},
            "'nope', not one of its own",
        ),
        ({"compare_with": "t"}, "not another timing figure"),
        ({"compare_with": "missing"}, "not another timing figure"),
    ],
)
def test_bad_timing_figures_are_refused_at_load(change, message):
    exp = _with_figures(t={**TIMING, **change})
    with pytest.raises(ValueError, match=message):
        experiment.check(experiment.expand(exp))


def test_schema_refuses_translations_without_image_shape_and_bad_values():
    exp = _with_figures(t={**TIMING, "translations": 2})
    with pytest.raises(jsonschema.ValidationError, match="image_shape"):
        jsonschema.validate(exp, SCHEMA)
    exp = _with_figures(t={**TIMING, "values": [10, "sparse"]})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(exp, SCHEMA)


REGRESSION = {
    "name": "reg",
    "task": "regression",
    "datasets": ["a"],
    "protocol": {"repetitions": 2, "train_fraction": 0.5, "inner_folds": 3, "seed": 0},
    "kernels": {"families": [{"family": "linear"}]},
    "algorithms": {"level": {"grid": {"C": [1, 10], "epsilon": [0.1, 1]}}},
}


def test_a_task_sets_the_metrics_and_reaches_the_fit_spec():
    reg = experiment.expand(REGRESSION)
    experiment.check(reg)
    assert experiment.task(reg) == "regression"
    assert experiment.table_metric(reg) == "rmse" and experiment.figure_metric(reg) == "r2"
    assert experiment.selection_metric(reg, "a") == "rmse"
    spec = experiment.fit_spec(reg, "level", "a")
    assert spec["task"] == "regression" and spec["grid"]["epsilon"] == [0.1, 1]
    novelty = {**REGRESSION, "task": "novelty", "algorithms": {"uniform": {"params": {"nu": 0.2}}}}
    experiment.check(experiment.expand(novelty))
    assert experiment.selection_metric(novelty, "a") == "auc"
    assert experiment.fit_spec(novelty, "uniform", "a")["task"] == "novelty"
    # a classifier's fit spec is as it always was: no task key, so no refit
    assert "task" not in experiment.fit_spec(experiment.expand(BASE), "uniform", "a")
    assert experiment.selection_metric(experiment.expand(BASE), "a") == "accuracy"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"algorithms": {"easymkl": {}}}, r"'easymkl' \(easymkl\) does not do regression"),
        (
            {"protocol": {**REGRESSION["protocol"], "selection_metric": "accuracy"}},
            "selection_metric 'accuracy' on 'a' is not a regression metric",
        ),
        ({"algorithms": {"level": {"params": {"nu": 0.5}}}}, r"sets \['nu'\]"),
        (
            {"task": "novelty", "algorithms": {"level": {"params": {"C": 1}}}},
            r"sets \['C'\], not parameters",
        ),
        (
            {"task": "novelty", "algorithms": {"single_best": {}}},
            "does not do novelty",
        ),
        (
            {"figures": {"w": {"dataset": "a", "series": {"s": {"algorithm": "level"}}}}},
            "fits classifiers; this experiment's task is regression",
        ),
    ],
)
def test_tasks_refuse_what_they_cannot_do(change, message):
    with pytest.raises(ValueError, match=message):
        experiment.check(experiment.expand({**REGRESSION, **change}))


def test_datasets_must_match_the_task(tmp_path):
    """A regression needs real targets (target: real), a classifier classes."""
    from mkl.workflow.config import ConfigError, load_experiment

    registry = {"cls": {"title": "c", "sources": []}, "real": {"title": "r", "target": "real"}}
    for name, task, dataset, message in [
        ("e1", "regression", "cls", "has classes, not the real targets"),
        ("e2", None, "real", "only an experiment with task: regression"),
        ("e3", "novelty", "real", "only an experiment with task: regression"),
    ]:
        exp = {**REGRESSION, "name": name, "datasets": [dataset], "task": task}
        if task is None:
            del exp["task"]
            exp["algorithms"] = {"level": {"grid": {"C": [1]}}}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(exp))
        with pytest.raises(ConfigError, match=message):
            load_experiment(tmp_path / f"{name}.yaml", registry, REPO / "workflow" / "schemas")


def test_an_entry_that_sets_no_C_gets_the_default_grid_in_the_banks_unit():
    """Issue 60: an entry without C is cross-validated over DEFAULT_C_GRID in
    the unit of its bank's normalisation (``C_units``, resolved by
    mkl.workflow.evaluation.entry_grid); an entry that sets C, single_best's
    own ``Cs``, EasyMKL / MEMO (a hard margin by default) and a novelty
    experiment (no C) keep what they had, so their fit specs are unchanged."""
    exp = experiment.expand(
        {
            **BASE,
            "algorithms": {
                "level": {"grid": {"tol": [0.1, 0.01]}},
                "uniform": {"params": {"C": 10}},
                "single_best": {"params": {"Cs": [1, 10]}},
                "easymkl": {"grid": {"lam": [0.1, 0.9]}},
            },
            "overrides": {},
        }
    )
    level = experiment.algorithm(exp, "level", "a")
    assert level["grid"] == {"C": list(experiment.DEFAULT_C_GRID), "tol": [0.1, 0.01]}
    assert experiment.fit_spec(exp, "level", "a")["C_units"] == "normalisation"
    for name in ("uniform", "single_best", "easymkl"):
        assert experiment.algorithm(exp, name, "a") == exp["algorithms"][name]
        assert "C_units" not in experiment.fit_spec(exp, name, "a")
    novelty = {**exp, "task": "novelty", "algorithms": {"level": {"grid": {"nu": [0.1]}}}}
    assert experiment.algorithm(novelty, "level", "a") == {"grid": {"nu": [0.1]}}


def test_hard_margin_by_default_is_the_classes_default():
    import mkl
    from mkl.algorithms.registry import ALGORITHMS, algorithm_info

    with_C = [name for name in ALGORITHMS if "C" in algorithm_info(name).params]
    hard = {name for name in with_C if mkl.make_estimator(name).get_params()["C"] is None}
    assert hard == experiment.HARD_MARGIN_BY_DEFAULT


@pytest.mark.parametrize(
    "entry, shown",
    [
        ({"grid": {"C": [-1, 10]}}, "grid C holds -1"),
        ({"grid": {"C": [-1]}}, "grid C holds -1"),
        ({"grid": {"C": [0]}}, "grid C holds 0"),
        ({"grid": {"C": ["10"]}}, "grid C holds '10'"),
        ({"params": {"C": -5}}, "params C holds -5"),
        ({"estimator": "single_best", "params": {"Cs": [10, -1]}}, "params Cs holds -1"),
    ],
)
def test_a_C_that_is_not_positive_is_refused_when_the_experiment_loads(entry, shown):
    """Issue 60: ``C: [-1, 10]`` dropped the -1 point as a failed one and
    ``C: [-1]`` crashed the figures rule; both are refused by name at load."""
    exp = experiment.expand({**BASE, "algorithms": {"uniform": entry}, "overrides": {}})
    with pytest.raises(ValueError, match=rf"algorithm 'uniform' on 'a': {shown}; C must be"):
        experiment.check(exp)
    hard = {**BASE, "algorithms": {"uniform": {"grid": {"C": [None, 1]}}}, "overrides": {}}
    experiment.check(experiment.expand(hard))  # null: a hard margin


def test_an_experiment_names_the_radius_margin_methods():
    """rmkl and gram (mkl/algorithms/radius_margin.py) from an experiment file:
    checked at load, rmkl on the default C grid, gram a hard margin (no C
    grid unless asked), an unknown parameter refused by name."""
    exp = experiment.expand(
        {**BASE, "algorithms": {"rmkl": {}, "gram": {"params": {"tol": 0.01}}}, "overrides": {}}
    )
    experiment.check(exp)
    assert experiment.takes_default_C(exp["algorithms"]["rmkl"], "rmkl", "classification")
    assert not experiment.takes_default_C(exp["algorithms"]["gram"], "gram", "classification")
    assert experiment.fit_spec(exp, "gram", "a")["params"] == {"tol": 0.01}
    bad = {**BASE, "algorithms": {"gram": {"params": {"lam": 0.1}}}, "overrides": {}}
    with pytest.raises(ValueError, match="lam"):
        experiment.check(experiment.expand(bad))


def test_the_schema_takes_the_bank_families_the_library_takes():
    """One bank specification: the experiment schema's families are the
    built-in ones and scikit-learn's pairwise kernels by name, with a grid of
    their parameters (a number or values), as mkl.kernels.specs expands them."""
    from mkl.kernels.specs import FAMILIES, PAIRWISE_KERNELS, expand_bank_spec

    entry = SCHEMA["$defs"]["kernels"]["properties"]["families"]["items"]
    assert set(entry["properties"]["family"]["enum"]) == {*FAMILIES, *PAIRWISE_KERNELS}
    keywords = {key for keys in PAIRWISE_KERNELS.values() for key in keys}
    assert keywords <= set(entry["properties"])
    exp = yaml.safe_load(yaml.safe_dump(BASE))
    exp["kernels"] = {
        "families": [
            {"family": "laplacian", "gamma": {"base": 10, "from": -2, "to": 0}},
            {"family": "sigmoid", "gamma": 0.1, "coef0": [0, 1]},
        ],
        "normalise": "unit_diagonal",
    }
    jsonschema.validate(exp, SCHEMA)
    labels = [s.label() for s in expand_bank_spec(exp["kernels"], 4)]
    assert labels == [
        "laplacian(gamma=0.01)@all",
        "laplacian(gamma=0.1)@all",
        "laplacian(gamma=1)@all",
        "sigmoid(gamma=0.1,coef0=0)@all",
        "sigmoid(gamma=0.1,coef0=1)@all",
    ]
    exp["kernels"]["families"][0]["gamma"] = "wide"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(exp, SCHEMA)
