// Elasticsearch 7.10.2 for make check-long (tests/integration/long_deliver_es7.sh):
// one node via codelibs' cluster runner, any HTTP port, prints its ready line.
// usage: java -cp CP Es7Engine.java BASEDIR CONFDIR HTTP_PORT
public class Es7Engine {
    public static void main(String[] a) throws Exception {
        org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner r =
            new org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner();
        r.setMaxHttpPort(-1);
        int port = Integer.parseInt(a[2]);
        try {
            r.build(new String[] {"-basePath", a[0], "-confPath", a[1], "-numOfNode", "1",
                                  "-baseHttpPort", Integer.toString(port - 1), "-clusterName", "searchsync-es7"});
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.out.println("SEARCHSYNC_ES7_READY http=" + port);
        while (!r.isClosed()) Thread.sleep(2000);
    }
}
