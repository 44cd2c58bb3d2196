// tests/harness/engines/elasticsearch-7/Es7Engine.java — launcher for
// Elasticsearch 7.10.2 in one JVM (codelibs' elasticsearch-cluster-runner),
// compiled by ../../engine.sh fetch (ENGINE=elasticsearch-7). The same contract
// as ../../opensearch/SearchsyncEngine.java: the runner's arguments passed
// through, the HTTP port exactly -baseHttpPort + 1, a startup failure's stack
// trace printed, "SEARCHSYNC_ENGINE_READY http=<port>" once the node started.
import org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner;

public final class Es7Engine {
    public static void main(final String[] args) throws Exception {
        final ElasticsearchClusterRunner runner = new ElasticsearchClusterRunner();
        runner.setMaxHttpPort(-1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final Throwable t) {
                t.printStackTrace();
            }
        }));
        try {
            runner.build(args);
        } catch (final Throwable t) {
            System.err.println("SEARCHSYNC_ENGINE_FAILED");
            t.printStackTrace();
            System.exit(1);
        }
        final String port = runner.node().settings().get("http.port");
        System.out.println("SEARCHSYNC_ENGINE_READY http=" + port);
        System.out.flush();
        while (!runner.isClosed()) {
            Thread.sleep(1000);
        }
    }
}
