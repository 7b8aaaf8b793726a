// Filtered reads through Java Paimon's own API (0.9 and 2.0), to see whether Java skips files by their index.
// Usage: FileIndexProbe WAREHOUSE DB TABLE COLUMN=VALUE...; prints one JSON line per filter:
// {"filter": "col=value", "files": <data files planned>, "rows": <rows the reader returned>}.
// Java's batch read does not filter rows by itself: the rows returned are those of the files (and row groups)
// it did not skip, so "rows" shows the skipping done while reading (separate .index files), "files" the
// skipping done while planning (embedded indexes).

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.BigIntType;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.IntType;
import org.apache.paimon.types.RowType;

import java.util.Collections;
import java.util.List;

public class FileIndexProbe {
    public static void main(String[] args) throws Exception {
        Options options = new Options();
        options.set("warehouse", args[0]);
        options.set("cache-enabled", "false");
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration(false);
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options, conf))) {
            // One manifest-reading thread: Java 0.9's AppendOnlyFileStoreScan.testFileIndex caches schemas in a plain
            // HashMap from every manifest thread (a ConcurrentModificationException now and then on a loaded machine).
            Table table = catalog.getTable(Identifier.create(args[1], args[2]))
                    .copy(Collections.singletonMap("scan.manifest.parallelism", "1"));
            RowType rowType = table.rowType();
            for (int i = 3; i < args.length; i++) {
                String[] kv = args[i].split("=", 2);
                int index = rowType.getFieldNames().indexOf(kv[0]);
                DataType type = rowType.getTypeAt(index);
                Object literal = type instanceof BigIntType ? (Object) Long.parseLong(kv[1])
                        : type instanceof IntType ? (Object) Integer.parseInt(kv[1])
                        : BinaryString.fromString(kv[1]);
                Predicate predicate = new PredicateBuilder(rowType).equal(index, literal);
                ReadBuilder builder = table.newReadBuilder().withFilter(predicate);
                List<Split> splits = builder.newScan().plan().splits();
                int files = 0;
                long rows = 0;
                for (Split split : splits) {
                    files += ((DataSplit) split).dataFiles().size();
                    try (RecordReader<InternalRow> reader = builder.newRead().createReader(split)) {
                        RecordReader.RecordIterator<InternalRow> batch;
                        while ((batch = reader.readBatch()) != null) {
                            while (batch.next() != null) {
                                rows++;
                            }
                            batch.releaseBatch();
                        }
                    }
                }
                System.out.println("{\"filter\": \"" + args[i] + "\", \"files\": " + files + ", \"rows\": " + rows + "}");
            }
        }
    }
}
