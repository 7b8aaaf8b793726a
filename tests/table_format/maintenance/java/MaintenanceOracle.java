package maintoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.fs.Path;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.table.FileStoreTable;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs Paimon 0.9's own maintenance operations (expire snapshots, tags, rollback, orphan clean) on a
 * filesystem-catalog table, so that tests can compare them with the Python implementation.
 *
 * <p>Batch protocol: one command per stdin line, fields separated by TAB:
 * expire WH DB T RETAIN_MIN RETAIN_MAX OLDER_THAN_EPOCH_MILLIS MAX_DELETES
 * tag-create WH DB T NAME SNAPSHOT_ID|- TIME_RETAINED_MILLIS|-
 * tag-delete WH DB T NAME
 * rollback-snapshot WH DB T ID
 * rollback-tag WH DB T NAME
 * orphan WH DB T OLDER_THAN_EPOCH_MILLIS
 * After each command: its output lines, then "@@END rc=N".
 */
public class MaintenanceOracle {

    private static FileStoreTable table(Catalog catalog, String db, String t) throws Exception {
        return (FileStoreTable) catalog.getTable(Identifier.create(db, t));
    }

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration(false);
        return CatalogFactory.createCatalog(CatalogContext.create(options, conf));
    }

    static List<String> run(String[] a) throws Exception {
        List<String> out = new ArrayList<>();
        try (Catalog catalog = catalog(a[1])) {
            FileStoreTable table = table(catalog, a[2], a[3]);
            switch (a[0]) {
                case "expire": {
                    long olderThan = Long.parseLong(a[6]);
                    ExpireConfig config =
                            ExpireConfig.builder()
                                    .snapshotRetainMin(Integer.parseInt(a[4]))
                                    .snapshotRetainMax(Integer.parseInt(a[5]))
                                    .snapshotTimeRetain(
                                            Duration.ofMillis(System.currentTimeMillis() - olderThan))
                                    .snapshotMaxDeletes(Integer.parseInt(a[7]))
                                    .build();
                    out.add(String.valueOf(table.newExpireSnapshots().config(config).expire()));
                    break;
                }
                case "tag-create": {
                    String name = a[4];
                    boolean latest = a[5].equals("-");
                    if (a[6].equals("-")) {
                        if (latest) {
                            table.createTag(name);
                        } else {
                            table.createTag(name, Long.parseLong(a[5]));
                        }
                    } else {
                        Duration d = Duration.ofMillis(Long.parseLong(a[6]));
                        if (latest) {
                            table.createTag(name, d);
                        } else {
                            table.createTag(name, Long.parseLong(a[5]), d);
                        }
                    }
                    break;
                }
                case "tag-delete":
                    table.deleteTag(a[4]);
                    break;
                case "rollback-snapshot":
                    table.rollbackTo(Long.parseLong(a[4]));
                    break;
                case "rollback-tag":
                    table.rollbackTo(a[4]);
                    break;
                case "orphan": {
                    String ts =
                            LocalDateTime.ofInstant(
                                            Instant.ofEpochMilli(Long.parseLong(a[4])),
                                            ZoneId.systemDefault())
                                    .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS"));
                    // Paimon 0.9's OrphanFilesClean, by reflection so that this file also compiles against 2.0
                    // (where the class is abstract and this verb is not used)
                    Object clean =
                            Class.forName("org.apache.paimon.operation.OrphanFilesClean")
                                    .getConstructor(FileStoreTable.class)
                                    .newInstance(table);
                    clean = clean.getClass().getMethod("olderThan", String.class).invoke(clean, ts);
                    for (Object p : (List<?>) clean.getClass().getMethod("clean").invoke(clean)) {
                        out.add(((Path) p).toUri().getPath());
                    }
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown command " + a[0]);
            }
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter stdout = new PrintWriter(System.out, true);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            int rc = 0;
            try {
                for (String s : run(line.split("\t", -1))) {
                    stdout.println(s);
                }
            } catch (Throwable e) {
                rc = 1;
                StringWriter sw = new StringWriter();
                e.printStackTrace(new PrintWriter(sw));
                for (String s : sw.toString().split("\n")) {
                    stdout.println("@@ERR " + s);
                }
            }
            stdout.println("@@END rc=" + rc);
            stdout.flush();
        }
    }
}
