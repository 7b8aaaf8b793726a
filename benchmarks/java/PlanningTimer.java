// Times Java Paimon's own scan planning and one commit on a table, inside the JVM (start-up not counted).
// Compiled and run by benchmarks/bench_planning.py against the 0.9 oracle's jars ($PAIMON_ORACLE_HOME/lib).
// Usage: PlanningTimer WAREHOUSE DB TABLE OP PARTITION ID_BELOW   (OP: filtered | full | commit)
// Prints one JSON line: {"op": ..., "seconds": ..., "files": ..., "peak_rss_mb": ...}.

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;

public class PlanningTimer {
    public static void main(String[] args) throws Exception {
        Options options = new Options();
        options.set("warehouse", args[0]);
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
        Table table = catalog.getTable(Identifier.create(args[1], args[2]));
        String op = args[3];
        int partition = Integer.parseInt(args[4]);
        long idBelow = Long.parseLong(args[5]);
        long files = 0;
        long start = System.nanoTime();
        if (op.equals("commit")) {
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
                write.write(GenericRow.of(partition, -1L, 0.0));
                List<CommitMessage> messages = write.prepareCommit();
                commit.commit(messages);
            }
            files = 1;
        } else {
            ReadBuilder rb = table.newReadBuilder();
            if (op.equals("filtered")) {
                PredicateBuilder pb = new PredicateBuilder(table.rowType());
                Predicate p = PredicateBuilder.and(pb.equal(0, partition), pb.lessThan(1, idBelow));
                rb = rb.withFilter(p);
            }
            for (Split s : rb.newScan().plan().splits()) {
                files += ((DataSplit) s).dataFiles().size();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long hwmKb = 0;
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                hwmKb = Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        System.out.println("{\"op\": \"" + op + "\", \"seconds\": " + seconds + ", \"files\": " + files
                + ", \"peak_rss_mb\": " + (hwmKb / 1024.0) + "}");
    }
}
