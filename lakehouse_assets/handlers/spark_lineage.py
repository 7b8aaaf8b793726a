"""Column lineage of a Spark DataFrame from its analyzed plan: which columns of which Paimon tables each output
column is computed from.

The plan (``queryExecution().analyzed()``) as JSON gives every node's expressions with their expression ids: an
``Alias`` makes a new id from the attributes it references, and attributes keep their ids through filters, joins,
sorts and projections. Following the ids of the output columns down to the leaf relations that read ``paimon``
tables (``DataSourceV2Relation`` with a ``path`` option) gives, per output column, the table columns it depends
on. A union's output takes the ids of its first child (the other children read in the same positions are added).
A small table the IO manager read on the driver is a ``LocalRelation``: its output ids are registered with the
table's columns when it is read (``register_local_read``), and followed as the relations' are.
"""

import json
from collections.abc import Iterator
from typing import Any

from pyspark.sql import DataFrame

RELATION = "org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation"
ALIAS = "org.apache.spark.sql.catalyst.expressions.Alias"
ATTRIBUTE = "org.apache.spark.sql.catalyst.expressions.AttributeReference"
UNION = "org.apache.spark.sql.catalyst.plans.logical.Union"

Source = tuple[str, str]  # (table path or URI, column)
_LOCAL_READS: dict[int, Source] = {}  # expression id of a column of a DataFrame read on the driver -> its source


def register_local_read(frame: DataFrame, path: str) -> None:
    """``frame`` (read on the driver: a LocalRelation) holds the columns of the table at ``path``, by name."""
    for attribute in _jvm_seq(frame._jdf.queryExecution().analyzed().output()):
        _LOCAL_READS[attribute.exprId().id()] = (path, attribute.name())


def _flattened(value: Any) -> Iterator[list[dict[str, Any]]]:
    """The flattened expression trees (pre-order lists of nodes) held by one field of a plan node."""
    if isinstance(value, list) and value and isinstance(value[0], dict) and "class" in value[0]:
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _flattened(item)


def _attribute_ids(expression: list[dict[str, Any]]) -> set[int]:
    return {node["exprId"]["id"] for node in expression if node.get("class") == ATTRIBUTE}


def _subtrees(nodes: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(start, end) of each node's subtree in the pre-order list."""
    spans = [(0, 0)] * len(nodes)

    def walk(i: int) -> int:
        end = i + 1
        for _ in range(nodes[i].get("num-children", 0)):
            end = walk(end)
        spans[i] = (i, end)
        return end

    walk(0)
    return spans


def column_sources(frame: DataFrame) -> dict[str, list[Source]]:
    """Output column -> the (table path, column) pairs it is computed from, for the Paimon tables the plan reads."""
    plan = frame._jdf.queryExecution().analyzed()
    nodes = json.loads(plan.toJSON())
    deps: dict[int, set[int]] = {}
    leaves: dict[int, Source] = {}
    relations = [leaf for leaf in _jvm_seq(plan.collectLeaves()) if leaf.getClass().getName() == RELATION]
    relation_no = 0
    spans = _subtrees(nodes)
    for index, node in enumerate(nodes):
        for field, value in node.items():
            if field in ("class", "num-children"):
                continue
            for expression in _flattened(value):
                if expression[0].get("class") == ALIAS:
                    deps.setdefault(expression[0]["exprId"]["id"], set()).update(_attribute_ids(expression[1:]))
        if node["class"] == RELATION:
            path = relations[relation_no].options().get("path") if relation_no < len(relations) else None
            relation_no += 1
            if path:
                for expression in _flattened(node.get("output", [])):
                    for attribute in expression:
                        if attribute.get("class") == ATTRIBUTE:
                            leaves[attribute["exprId"]["id"]] = (path, attribute["name"])
        if node["class"] == UNION:
            _union_deps(nodes, spans, index, deps)

    def resolve(expr_id: int, seen: set[int]) -> set[Source]:
        if expr_id in leaves:
            return {leaves[expr_id]}
        if expr_id in _LOCAL_READS:
            return {_LOCAL_READS[expr_id]}
        found: set[Source] = set()
        for dep in deps.get(expr_id, ()):
            if dep not in seen:
                seen.add(dep)
                found |= resolve(dep, seen)
        return found

    return {attribute.name(): sorted(resolve(attribute.exprId().id(), set()))
            for attribute in _jvm_seq(plan.output())}


def _union_deps(nodes: list[dict[str, Any]], spans: list[tuple[int, int]], index: int,
                deps: dict[int, set[int]]) -> None:
    """A union's output ids are its first child's: add the other children's columns at the same positions."""
    children, start = [], index + 1
    for _ in range(nodes[index].get("num-children", 0)):
        children.append(_output_ids(nodes, spans, start))
        start = spans[start][1]
    if len(children) < 2 or not children[0]:
        return
    for position, expr_id in enumerate(children[0]):
        for other in children[1:]:
            if position < len(other) and other[position] != expr_id:
                deps.setdefault(expr_id, set()).add(other[position])


def _output_ids(nodes: list[dict[str, Any]], spans: list[tuple[int, int]], index: int) -> list[int]:
    """The output ids of a child of a union, when its node lists them (a projection or a relation)."""
    node = nodes[index]
    for field in ("projectList", "output"):
        if field in node:
            ids = []
            for expression in _flattened(node[field]):
                head = expression[0]
                ids.append(head["exprId"]["id"] if "exprId" in head else -1)
            return ids
    if node.get("num-children") == 1:  # a filter, sort, limit: the child's output
        return _output_ids(nodes, spans, index + 1)
    return []


def _jvm_seq(seq: Any) -> list[Any]:
    return [seq.apply(i) for i in range(seq.size())]
