"""Write-audit-publish of a Spark DataFrame asset: the DataFrame is written into the audit branch through the data
source's option "branch", the blocking check reads the branch as a DataFrame, publication fast-forwards main."""

import dagster as dg
import pyarrow as pa
from pyspark.sql import DataFrame

from lakehouse_assets import PaimonIOManager, PaimonPySparkResource, pyspark_resource
from lakehouse_assets.audit import audit_check_result, paimon_publish_asset
from table_format import FileSystemCatalog

AMOUNTS = {"values": [1.0, 2.0]}


@dg.asset(key=["sp", "payments"], metadata={"publish": "audit"})
def payments(pyspark: PaimonPySparkResource) -> DataFrame:
    data = pa.table({"id": pa.array(range(len(AMOUNTS["values"])), pa.int64()), "amount": AMOUNTS["values"]})
    return pyspark.spark_session.createDataFrame(data)


@dg.asset_check(asset=payments, blocking=True)
def payments_positive(context: dg.AssetCheckExecutionContext, payments: DataFrame) -> dg.AssetCheckResult:
    bad = payments.filter("amount < 0").count()
    return audit_check_result(context, passed=bad == 0, description=f"{bad} negative payments")


def test_spark_dataframe_audited_on_branch(spark, warehouse, instance):
    def run() -> dg.ExecuteInProcessResult:
        return dg.materialize([payments, payments_positive, paimon_publish_asset(payments)], instance=instance,
                              raise_on_error=False, resources={"io_manager": PaimonIOManager(warehouse=warehouse),
                                                               "pyspark": pyspark_resource()})

    assert run().success
    table = FileSystemCatalog(warehouse).load_table("sp.payments")
    assert table.latest_snapshot().id == 1 and table.branches() == []
    AMOUNTS["values"] = [5.0, -1.0, 3.0]
    assert not run().success
    table = FileSystemCatalog(warehouse).load_table("sp.payments")
    assert table.latest_snapshot().id == 1
    assert sorted(table.scan().to_arrow().column("amount").to_pylist()) == [1.0, 2.0]
    (branch,) = table.branches()
    assert sorted(table.branch(branch).scan().to_arrow().column("amount").to_pylist()) == [-1.0, 3.0, 5.0]
