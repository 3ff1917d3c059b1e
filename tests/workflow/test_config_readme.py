"""config/README.md documents every configuration key: each key the JSON
schemas of workflow/schemas/ allow (config/config.yaml, the experiment files,
the dataset registry) has its row in the file's tables, and each row names a
key the schemas allow; each parser's keyword arguments (a registry source's
``options``) are listed under its format."""

import inspect
import re
from collections.abc import Iterator

import pytest
import yaml

from mkl.workflow.parsers import PARSERS, SIMILARITY_PARSERS

from ..conftest import REPO

SCHEMAS = REPO / "workflow" / "schemas"
DOC = REPO / "config" / "README.md"
# the table of config/README.md holding each schema's keys, by its heading
TABLES = {
    "config.schema.yaml": "config/config.yaml",
    "experiment.schema.yaml": "Experiment files",
    "datasets.schema.yaml": "The dataset registry",
}
NAME = "<>"  # any name: a dataset, an algorithm, a figure (written <dataset>, <algorithm>, ...)


def schema_keys(schema: dict) -> list[str]:
    """Every key of ``schema``, as a dotted path: ``protocol.seed``; ``[]``
    for the items of a list (``kernels.families[].family``), ``<>`` for a
    name chosen by the user (``algorithms.<>.grid``). A ``$ref`` is expanded
    where it is first met; later uses list the key alone (``overrides.<>.kernels``)."""
    defs, expanded, keys = schema.get("$defs", {}), set(), []

    def walk(node: dict, path: str) -> Iterator[str]:
        ref = node.get("$ref")
        if ref:
            name = ref.rsplit("/", 1)[1]
            if name in expanded:
                return
            expanded.add(name)
            yield from walk(defs[name], path)
        for key, sub in node.get("properties", {}).items():
            child = f"{path}.{key}" if path else key
            yield child
            yield from walk(sub, child)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and _has_keys(extra, defs):
            yield from walk(extra, f"{path}.{NAME}" if path else NAME)
        if isinstance(node.get("items"), dict):
            yield from walk(node["items"], f"{path}[]")
        for combined in ("allOf", "oneOf", "anyOf"):
            for sub in node.get(combined, []):
                yield from walk(sub, path)

    for key in walk(schema, ""):
        if key not in keys:
            keys.append(key)
    return keys


def _has_keys(node: dict, defs: dict) -> bool:
    """Whether an object schema names keys (properties), itself or through a $ref."""
    if "$ref" in node:
        return _has_keys(defs[node["$ref"].rsplit("/", 1)[1]], defs)
    return "properties" in node or any(
        _has_keys(sub, defs) for c in ("allOf", "oneOf", "anyOf") for sub in node.get(c, [])
    )


def documented(heading: str) -> list[str]:
    """The keys in the first column of the table under ``## heading``, names
    written ``<dataset>`` read as ``<>``."""
    text = DOC.read_text()
    section = re.split(r"\n##+ ", text.split(f"## {heading}\n", 1)[1])[0]
    rows = re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)
    return [re.sub(r"<[^>]*>", NAME, key) for key in rows]


@pytest.mark.parametrize("schema", sorted(TABLES))
def test_every_schema_key_is_documented_and_every_documented_key_exists(schema):
    keys = schema_keys(yaml.safe_load((SCHEMAS / schema).read_text()))
    rows = documented(TABLES[schema])
    assert keys, schema
    missing = [k for k in keys if k not in rows]
    assert not missing, f"config/README.md lacks rows for {schema}'s keys {missing}"
    unknown = [k for k in rows if k not in keys]
    assert not unknown, f"config/README.md documents keys {schema} does not have: {unknown}"
    assert len(rows) == len(set(rows)), f"a key of {schema} has two rows"


def test_every_parser_option_is_listed_under_its_format():
    text = DOC.read_text()
    section = text.split("### Parser options, by format\n", 1)[1].split("\n## ", 1)[0]
    listed = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", section, flags=re.M))
    formats = yaml.safe_load((SCHEMAS / "datasets.schema.yaml").read_text())
    enum = formats["additionalProperties"]["properties"]["sources"]["items"]["properties"]
    assert set(listed) == set(enum["format"]["enum"])
    for fmt, parser in {**PARSERS, **SIMILARITY_PARSERS}.items():
        options = list(inspect.signature(parser).parameters)[1:]  # after the paths
        missing = set(options) - set(re.findall(r"`(\w+)`", listed[fmt]))
        assert not missing, f"config/README.md: format {fmt}'s options lack {sorted(missing)}"


def test_the_walk_reads_refs_items_and_names():
    schema = {
        "$defs": {"p": {"type": "object", "properties": {"seed": {}}}},
        "properties": {
            "protocol": {"allOf": [{"$ref": "#/$defs/p"}, {"required": ["seed"]}]},
            "kernels": {"properties": {"families": {"items": {"properties": {"family": {}}}}}},
            "algorithms": {"additionalProperties": {"properties": {"grid": {}}}},
            "overrides": {
                "additionalProperties": {"properties": {"protocol": {"$ref": "#/$defs/p"}}}
            },
            "tables": {"additionalProperties": {"type": "array"}},
        },
    }
    assert schema_keys(schema) == [
        "protocol",
        "protocol.seed",
        "kernels",
        "kernels.families",
        "kernels.families[].family",
        "algorithms",
        "algorithms.<>.grid",
        "overrides",
        "overrides.<>.protocol",
        "tables",
    ]
