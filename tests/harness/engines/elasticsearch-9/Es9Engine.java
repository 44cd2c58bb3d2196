// tests/harness/engines/elasticsearch-9/Es9Engine.java — Elasticsearch 9 in one
// JVM from Maven Central's jars (org.elasticsearch:elasticsearch, the server, on
// the classpath; the transport-netty4 module loaded from HOME/modules by the
// server's own PluginsLoader), compiled by ../../engine.sh fetch
// (ENGINE=elasticsearch-9). What the distribution's bootstrap does and this
// does not: the entitlement agent, native access (seccomp, mlockall, the root
// check), the security manager replacement; none of them changes how the node
// answers requests. Only transport-netty4 is loaded: no painless, parent-join,
// reindex, analysis-common, mapper-extras, rest-root (GET /).
// usage: java -cp CP Es9Engine HOME DATA LOGS HTTP_PORT TRANSPORT_PORT CLUSTER
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Set;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.PluginsLoader;

public final class Es9Engine {
    public static void main(final String[] a) throws Exception {
        final Path home = Paths.get(a[0]);
        LogConfigurator.configureESLogging();
        final Settings s = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", a[1])
            .put("path.logs", a[2])
            .put("http.port", a[3])
            .put("transport.port", a[4])
            .put("cluster.name", a[5])
            .put("node.name", "searchsync-engine")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.destructive_requires_name", false)
            .build();
        LogConfigurator.configureWithoutConfig(s);
        final Node node;
        try {
            final Environment env = InternalSettingsPreparer.prepareEnvironment(
                s, Map.of(), home.resolve("config"), () -> "searchsync-engine");
            final PluginsLoader loader = PluginsLoader.createPluginsLoader(
                PluginsLoader.loadModulesBundles(env.modulesDir(), false), Set.of(), Map.of(), false);
            node = new Node(env, loader);
            node.start();
        } catch (final Throwable t) {
            System.err.println("SEARCHSYNC_ENGINE_FAILED");
            t.printStackTrace();
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (final Throwable t) {
                t.printStackTrace();
            }
        }));
        System.out.println("SEARCHSYNC_ENGINE_READY http=" + a[3]);
        System.out.flush();
        Thread.currentThread().join();
    }
}
