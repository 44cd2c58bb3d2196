#!/usr/bin/env python3
"""engine_dump.py — every document the search engine holds behind an alias.

usage: engine_dump.py SEARCH_URL ALIAS_OR_INDEX > docs.ndjson

Refreshes, then scrolls over every shard of every index behind the alias
(sorted by _doc, the cheapest order) and prints one NDJSON line per hit:
  {"id": _id, "routing": _routing or null, "index": _index, "doc": _source}
— the shape of the SQL oracle (tests/integration/oracle_lib.sh), so
compare_docs.py compares them. A document indexed twice under one id (two
routings, two shards) comes out twice. The last line on stderr says how many
documents and how many primary shards were read; a shard failure is fatal.
Works with OpenSearch 1/2 and Elasticsearch 7/8 (plain HTTP, no auth).
"""
import json
import sys
import urllib.error
import urllib.request


def req(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(url, data=data, method=method,
                               headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(r, timeout=120) as resp:
            return json.loads(resp.read().decode('utf-8'))
    except urllib.error.HTTPError as e:
        sys.exit('engine_dump: %s %s -> HTTP %d: %s' % (method, url, e.code, e.read()[:500]))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, alias = sys.argv[1].rstrip('/'), sys.argv[2]
    req('POST', '%s/%s/_refresh' % (base, alias))
    r = req('POST', '%s/%s/_search?scroll=2m' % (base, alias),
            {'size': 1000, 'sort': ['_doc'], 'track_total_hits': True,
             'query': {'match_all': {}}})
    shards = r.get('_shards', {})
    if shards.get('failed'):
        sys.exit('engine_dump: shard failures: %s' % json.dumps(shards))
    out = sys.stdout
    n, scroll_ids = 0, set()
    while True:
        hits = r['hits']['hits']
        if not hits:
            break
        for h in hits:
            out.write(json.dumps({'id': h['_id'], 'routing': h.get('_routing'),
                                  'index': h['_index'], 'doc': h['_source']},
                                 ensure_ascii=False) + '\n')
            n += 1
        sid = r['_scroll_id']
        scroll_ids.add(sid)
        r = req('POST', '%s/_search/scroll' % base, {'scroll': '2m', 'scroll_id': sid})
        if r.get('_shards', {}).get('failed'):
            sys.exit('engine_dump: shard failures while scrolling: %s' % json.dumps(r['_shards']))
    if r.get('_scroll_id'):
        scroll_ids.add(r['_scroll_id'])
    if scroll_ids:
        req('DELETE', '%s/_search/scroll' % base, {'scroll_id': sorted(scroll_ids)})
    total = r['hits']['total']
    total = total['value'] if isinstance(total, dict) else total
    if total != n:
        sys.exit('engine_dump: read %d hits but the search counted %s' % (n, total))
    print('engine_dump %s: %d documents from %d shards' % (alias, n, shards.get('total', 0)),
          file=sys.stderr)


if __name__ == '__main__':
    main()
