"""Loading the workflow's configuration: ``config/config.yaml``, the dataset
registry and the experiment files, each validated against its JSON schema
(``workflow/schemas/*.schema.yaml``, defaults filled in) and cross-checked
(an experiment's datasets are in the registry, its algorithms in the
library's, its figures name its own datasets and algorithms).

Any problem raises :class:`ConfigError` naming the file and what is wrong;
the Snakefile turns it into a ``WorkflowError``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from . import experiment

# targets of the workflow itself: an experiment's name is a target too
RESERVED_NAMES = ("all", "built", "fidelity")


class ConfigError(ValueError):
    """A configuration, registry or experiment file that cannot be used."""


def read_yaml(path: str | os.PathLike):
    """A YAML file's data, by libyaml's parser where PyYAML has it (the same
    data, several times faster than the pure-Python one: every start of
    Snakemake reads the registry and every experiment file)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        with open(path) as fh:
            return yaml.load(fh, Loader=loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None


def read_mapping(path: str | os.PathLike, what: str) -> dict:
    """A YAML file that must hold a mapping (an empty file or a list is refused
    here, naming the file: the schema validator accepts anything that is not one)."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise ConfigError(f"{path}: {what} must be a mapping, the file holds {kind}")
    return data


def validate(data, schema: str | os.PathLike, what: str) -> None:
    """Validate ``data`` against a JSON schema file (YAML), filling in its
    defaults, as ``snakemake.utils.validate`` does; the error names the
    problem and where it is in the file (not the whole schema, as
    jsonschema's own message does)."""
    import jsonschema

    try:
        _validator(str(Path(schema).resolve())).validate(data)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        at = f" (at {where})" if where else ""
        raise ConfigError(f"{what}: not valid: {exc.message}{at}") from None


@functools.cache
def _validator(schema: str):
    """A JSON-schema validator of the schema file ``schema`` (draft 2020-12,
    references within the file) that fills in each missing property that has a
    default (a copy of it), built once per file: ``snakemake.utils.validate``
    reads and parses the schema again at every call (once per experiment file
    at every start of Snakemake, 0.07 s each for the experiment schema)."""
    from jsonschema import Draft202012Validator, validators

    properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, props, instance, subschema):
        if validator.is_type(instance, "object"):
            for name, spec in props.items():
                if "default" in spec and name not in instance:
                    instance[name] = copy.deepcopy(spec["default"])
        yield from properties(validator, props, instance, subschema)

    spec = read_yaml(schema)
    spec["$id"] = Path(schema).as_uri()  # "#/$defs/..." resolve within the file
    filling = validators.extend(Draft202012Validator, {"properties": set_defaults})
    return filling(spec)


def load_config(config: dict, schemas: str | os.PathLike) -> dict:
    """The workflow configuration, validated; ``temporary_banks`` as a boolean
    (``--config temporary_banks=true`` gives the string "true")."""
    validate(config, Path(schemas) / "config.schema.yaml", "configuration")
    config["temporary_banks"] = str(config.get("temporary_banks", False)).lower() == "true"
    return config


def load_registry(path: str | os.PathLike, schemas: str | os.PathLike) -> dict:
    """The dataset registry, validated."""
    registry = read_mapping(path, "the dataset registry (dataset names to entries)")
    validate(registry, Path(schemas) / "datasets.schema.yaml", str(path))
    return registry


def load_experiment(path: str | os.PathLike, registry: Mapping, schemas: str | os.PathLike) -> dict:
    """One experiment file: validated, cross-checked, its sweeps expanded
    (``mkl.workflow.experiment.expand``)."""
    from ..algorithms.registry import ALGORITHMS

    path = Path(path)
    exp = read_mapping(path, "an experiment file")
    validate(exp, Path(schemas) / "experiment.schema.yaml", str(path))
    if exp["name"] != path.stem:
        raise ConfigError(f"{path}: name {exp['name']!r} differs from the file name")
    if exp["name"] in RESERVED_NAMES:
        raise ConfigError(f"{path}: {exp['name']!r} is the name of a workflow target")
    real = exp.get("task") == "regression"
    for ds in exp["datasets"]:
        if ds not in registry:
            raise ConfigError(f"{path}: dataset {ds!r} is not in the dataset registry")
        has_real = registry[ds].get("target") == "real"
        if real and not has_real:
            raise ConfigError(
                f"{path}: dataset {ds!r} has classes, not the real targets "
                "(target: real in the registry) of a regression"
            )
        if has_real and not real:
            raise ConfigError(
                f"{path}: dataset {ds!r} has real targets (target: real): "
                "only an experiment with task: regression can use it"
            )
    for fig, spec in exp.get("figures", {}).items():
        if "dataset" in spec and spec["dataset"] not in registry:
            raise ConfigError(
                f"{path}: figure {fig!r} uses {spec['dataset']!r}, not in the dataset registry"
            )
    for alg, spec in exp["algorithms"].items():
        if spec.get("estimator", alg) not in ALGORITHMS:
            raise ConfigError(
                f"{path}: algorithm {alg!r} is not in mkl's registry "
                f"({', '.join(sorted(ALGORITHMS))})"
            )
    try:
        exp = experiment.expand(exp)
        experiment.check(exp)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return exp


def load_experiments(
    directory: str | os.PathLike,
    registry: Mapping,
    schemas: str | os.PathLike,
    unusable: dict[str, str] | None = None,
) -> dict[str, dict]:
    """Every experiment file of ``directory``, by name.

    With ``unusable`` (a dict), a file that cannot be used (empty, not YAML,
    against the schema, naming what does not exist: any :class:`ConfigError`)
    is left out and recorded there instead, its name (the file's stem) ->
    the error, which names the file: the workflow then fails that
    experiment's targets alone, and every other experiment runs
    (``workflow/rules/common.smk``). Without it the first such file raises."""
    experiments = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        try:
            experiments[path.stem] = load_experiment(path, registry, schemas)
        except ConfigError as exc:
            if unusable is None:
                raise
            unusable[path.stem] = str(exc)
    return experiments


def experiments_dir(config: Mapping) -> Path:
    """The folder of the run's experiment files (config ``experiments_dir``)."""
    return Path(config.get("experiments_dir", "config/experiments"))


def registry_path(config: Mapping) -> Path:
    """The run's dataset registry (config ``registry``)."""
    return Path(config.get("registry", "config/datasets.yaml"))


def experiment_digest(exp: Mapping) -> str:
    """The first 16 hex digits of the SHA-256 of a loaded experiment (its
    JSON, keys sorted): what a job that reads the experiment takes as a param
    with its name, so that it reruns when what it reads changes (the file, or
    a default of the schema), and a hash, not the whole experiment, shows in
    the report's info panels."""
    text = json.dumps(exp, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_job_experiments(
    config: Mapping, digests: Mapping[str, str], schemas: str | os.PathLike
) -> dict[str, dict]:
    """The experiments a job reads, by name, loaded from the run's files as
    the Snakefile loaded them; ``digests`` (name -> :func:`experiment_digest`)
    are the job's params. An experiment whose file changed since the run was
    planned is refused, naming it: its job would otherwise read other
    settings than those it was scheduled for."""
    registry = load_registry(registry_path(config), schemas)
    loaded = {}
    for name, digest in digests.items():
        path = experiments_dir(config) / f"{name}.yaml"
        exp = load_experiment(path, registry, schemas)
        if experiment_digest(exp) != digest:
            raise ConfigError(
                f"{path} changed after this run was planned (the job was scheduled for "
                f"digest {digest}, the file now gives {experiment_digest(exp)}): run again"
            )
        loaded[name] = exp
    return loaded


def check_targets(
    config: Mapping,
    experiments: Mapping,
    directory: str | os.PathLike,
    unusable: Mapping[str, str] | None = None,
) -> None:
    """The experiments the configuration builds by default all have files
    (loaded, or ``unusable``: those fail their own targets, naming the file)."""
    for name in config["experiments"]:
        if name not in experiments and name not in (unusable or {}):
            raise ConfigError(f"experiment {name!r} has no file {Path(directory) / name}.yaml")
