"""The `dg` component ``lakehouse_definitions.PaimonLakehouse``: a Paimon warehouse, its observed tables and its
maintenance, declared in ``defs.yaml``.

    dg scaffold defs lakehouse_definitions.PaimonLakehouse lakehouse [--warehouse PATH_OR_URI]

writes ``defs/lakehouse/defs.yaml`` (every field with its default, to edit); ``dg check defs`` validates it and
``dg list defs`` shows what it builds (`paimon_lakehouse_definitions`). Secret options take an environment
variable, ``s3.secret-key: "{{ env.S3_SECRET_KEY }}"``, passed on as `dg.EnvVar` (the UI shows its name only).
"""

import re
from typing import Annotated, Any

import dagster as dg
from pydantic import BaseModel, Field, InstanceOf, field_validator

from lakehouse_definitions.lakehouse import SECRET_OPTIONS, paimon_lakehouse_definitions, resolve_warehouse
from lakehouse_definitions.policy import IOManagerPolicy, MaintenancePolicy, ObservedTable, check_spark_master

_ENV_TEMPLATE = re.compile(r"""\{\{\s*env(?:\.(\w+)|\(\s*['"](\w+)['"]\s*\))\s*\}\}""")


def resolve_options(context: dg.ResolutionContext, options: dict[str, Any] | None) -> dict[str, Any]:
    """Catalog options with their templates rendered; a secret is ``{{ env.NAME }}`` and becomes EnvVar(NAME)."""
    resolved: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key not in SECRET_OPTIONS:
            resolved[key] = str(context.resolve_value(value))
            continue
        match = _ENV_TEMPLATE.fullmatch(str(value).strip())
        if match is None:
            raise ValueError(f"options.{key}: a secret must come from an environment variable, e.g. "
                             f"'{{{{ env.S3_SECRET }}}}', not a literal value (it would show in the Dagster UI)")
        resolved[key] = dg.EnvVar(match.group(1) or match.group(2))
    return resolved


class ScaffoldParams(BaseModel):
    warehouse: str | None = Field(default=None, description="the warehouse path or URI (default ./warehouse)")
    spark_master: str | None = Field(default=None, description="the Spark master (default SPARK_MASTER, local[2])")


class PaimonLakehouseScaffolder(dg.Scaffolder[ScaffoldParams]):
    """Writes a ``defs.yaml`` with every field at its default, and commented examples."""

    @classmethod
    def get_scaffold_params(cls) -> type[ScaffoldParams]:
        return ScaffoldParams

    def scaffold(self, request: dg.ScaffoldRequest[ScaffoldParams]) -> None:
        if request.scaffold_format != "yaml" or request.append:
            dg.scaffold_component(request, {})
            return
        params = request.params or ScaffoldParams()
        (request.target_path / "defs.yaml").write_text(SCAFFOLD_YAML.format(
            type=request.type_name, warehouse=params.warehouse or "warehouse",
            spark_master=params.spark_master or "local[2]"))


SCAFFOLD_YAML = """type: {type}

attributes:
  warehouse: {warehouse}              # a path (relative to the project root) or s3://bucket/path
  # options:                          # s3:// warehouses; secrets only through environment variables
  #   s3.endpoint: http://127.0.0.1:8333
  #   s3.access-key: "{{{{ env.S3_ACCESS_KEY }}}}"
  #   s3.secret-key: "{{{{ env.S3_SECRET_KEY }}}}"
  spark_master: {spark_master}
  io_manager:                         # the io_manager resource (null: none)
    mode: overwrite                   # overwrite | append | upsert
    schema_mode: strict               # strict | merge
  observe: []                         # tables written outside Dagster, e.g.
  #   - table: raw.clicks
  #     deps: [raw.sessions]          # upstream tables: the lineage
  #     cron: "*/5 * * * *"           # observe every 5 minutes
  maintenance:
    tables: []                        # empty: every table of the warehouse
    compaction:
      enabled: true                   # the compaction sensor runs
      interval_seconds: 60
    expire_snapshots:
      enabled: true
      cron: "0 2 * * *"
      retain_min: null                # null: each table's snapshot.num-retained.min
      retain_max: null
      older_than: null                # e.g. "7 d"; null: snapshot.time-retained
    remove_orphan_files:
      enabled: true
      cron: "0 3 * * 0"
      older_than: 1 d
    health_checks: true
"""


@dg.scaffold_with(PaimonLakehouseScaffolder)
class PaimonLakehouse(dg.Component, dg.Model, dg.Resolvable):
    """A Paimon lakehouse: resources ``paimon_catalog``, ``pyspark`` and ``io_manager`` over the warehouse, the
    maintenance jobs, the compaction sensor, the expiry and orphan-removal schedules, an observable asset per
    table written outside Dagster, and table health checks."""

    warehouse: str | None = Field(
        default=None, description="warehouse path (relative to the project root) or URI; default LAKEHOUSE_WAREHOUSE")
    options: Annotated[
        dict[str, InstanceOf[dg.EnvVar] | str],
        dg.Resolver(resolve_options, model_field_type=dict[str, str],
                    description="catalog options of s3:// warehouses (s3.endpoint, s3.region, ...); secrets as "
                                "'{{ env.NAME }}'"),
    ] = Field(default_factory=dict)
    spark_master: str | None = Field(default=None, description="Spark master; default SPARK_MASTER, else local[2]")
    io_manager: IOManagerPolicy | None = Field(default_factory=IOManagerPolicy,
                                               description="the io_manager resource; null: none")
    observe: list[ObservedTable] = Field(default_factory=list, description="tables written outside Dagster")
    maintenance: MaintenancePolicy = Field(default_factory=MaintenancePolicy)

    @field_validator("spark_master")
    @classmethod
    def _spark_master(cls, value: str | None) -> str | None:
        return check_spark_master(value)

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        return paimon_lakehouse_definitions(
            warehouse=resolve_warehouse(self.warehouse, base=str(context.project_root)),
            options=self.options, spark_master=self.spark_master, observe=self.observe,
            maintenance=self.maintenance, io_manager=self.io_manager)
