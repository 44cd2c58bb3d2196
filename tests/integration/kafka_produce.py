#!/usr/bin/env python3
# tests/integration/kafka_produce.py — a test producer of Kafka change
# messages, written apart from the decoders under test (src/mq): it turns
# `searchsync tail` lines (docs/binlog.md "Values") of one database into
#   OUT/canal.kv     canal-json flat messages: every value MySQL's text,
#                    mysqlType from information_schema, consecutive rows of
#                    one table, kind and event in one message (up to 20), no
#                    binlog coordinates; key: db.table (one partition a table)
#   OUT/debezium.kv  Debezium MySQL envelopes with schemas (DECIMAL as base64
#                    unscaled bytes, DATETIME(0-3) epoch ms, TIMESTAMP
#                    ISO-8601 with Z, ENUM labels, MariaDB JSON as its text),
#                    one row a message, source.file/pos/row from tail's
#                    position; key: the table and the primary key; a
#                    delete followed by a tombstone (empty value: produce
#                    with kcat -Z), a key change as delete + tombstone + create
#   OUT/maxwell.kv   Maxwell JSON (output_binlog_position on): typed values
#                    (numbers as numbers, DECIMAL as an exact number,
#                    DATETIME/TIMESTAMP "YYYY-MM-DD HH:MM:SS[.ffffff]", MariaDB
#                    JSON — a LONGTEXT — as its text), "old" with the changed
#                    columns of an update, position "file:pos" of the
#                    transaction, xoffset the row within it, commit on its
#                    last row; key: Maxwell's {"database","table","pk.<col>"}
# as "key<TAB>value" lines for `kcat -K '\t'`; prints the next canal id.
# usage: kafka_produce.py COLS.tsv DB TAIL.jsonl OUTDIR FIRST-CANAL-ID
#   COLS.tsv: TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, is-primary-key (1/0)
import base64, datetime, decimal, json, re, sys
colsf, db, tailf, out, first_id = sys.argv[1:]
cols, types, pks = {}, {}, {}
for l in open(colsf, encoding='utf-8'):
    t, c, ty, pk = l.rstrip('\n').split('\t')
    cols.setdefault(t, []).append(c)
    types[(t, c)] = ty
    if pk == '1': pks.setdefault(t, []).append(c)
base = lambda ty: ty.split('(')[0].split(' ')[0]
# JSON with numbers written as read (json.loads(parse_float=Decimal) keeps their text)
def raw(o):
    if isinstance(o, decimal.Decimal): return '@@NUM@@%s@@' % o
    if isinstance(o, dict): return {k: raw(v) for k, v in o.items()}
    if isinstance(o, list): return [raw(v) for v in o]
    return o
def dumps(o, sep=(',', ':')):
    return re.sub(r'"@@NUM@@([^@"]*)@@"', r'\1', json.dumps(raw(o), ensure_ascii=False, separators=sep))
rows = [json.loads(l, parse_float=decimal.Decimal) for l in open(tailf, encoding='utf-8')]

# canal: MySQL's text of each value
def ctext(t, c, v):
    if v is None: return None
    b = base(types[(t, c)])
    if isinstance(v, (dict, list)): return dumps(v, (', ', ': '))
    if b in ('datetime', 'timestamp'): return v.replace('T', ' ').rstrip('Z')
    return str(v)
CTYPE = {'I': 'INSERT', 'U': 'UPDATE', 'D': 'DELETE'}
def canal(batch, mid):
    t, typ = batch[0]['table'], batch[0]['type']
    img = lambda r: {c: ctext(t, c, r[c]) for c in cols[t]}
    data = [img(r['after'] if r['after'] is not None else r['before']) for r in batch]
    old = None
    if typ == 'update':
        old = [{c: v for c, v in img(r['before']).items() if v != img(r['after'])[c]} for r in batch]
    return dumps({'data': data, 'database': db, 'table': t, 'pkNames': pks.get(t),
                  'isDdl': False, 'type': typ.upper(), 'es': 1700000000000, 'ts': 1700000000123,
                  'sql': '', 'sqlType': {c: 12 for c in cols[t]},
                  'mysqlType': {c: types[(t, c)] for c in cols[t]}, 'old': old, 'id': mid})
# Debezium with schemas
def field(t, c):
    ty = types[(t, c)]
    b = base(ty)
    f = {'optional': c not in pks.get(t, []), 'field': c}
    if b in ('tinyint', 'smallint', 'mediumint', 'int', 'bigint'): f['type'] = 'int64'
    elif b == 'year': f.update(type='int32', name='io.debezium.time.Year', version=1)
    elif b == 'decimal':
        p, s = ty[ty.index('(') + 1:ty.index(')')].split(',')
        f.update(type='bytes', name='org.apache.kafka.connect.data.Decimal', version=1,
                 parameters={'scale': s, 'connect.decimal.precision': p})
    elif b == 'datetime': f.update(type='int64', name='io.debezium.time.Timestamp', version=1)
    elif b == 'timestamp': f.update(type='string', name='io.debezium.time.ZonedTimestamp', version=1)
    elif b in ('float', 'double'): f['type'] = 'double'
    elif b == 'enum':
        f.update(type='string', name='io.debezium.data.Enum', version=1,
                 parameters={'allowed': ty[5:-1].replace("'", '')})
    else: f['type'] = 'string'
    return f
def dval(t, c, v):
    if v is None: return None
    b = base(types[(t, c)])
    if b == 'decimal':
        ty = types[(t, c)]
        scale = int(ty[ty.index(',') + 1:ty.index(')')])
        u = int(decimal.Decimal(v).scaleb(scale))
        return base64.b64encode(u.to_bytes((u.bit_length() + 8) // 8, 'big', signed=True)).decode()
    if b == 'datetime':
        s = v if '.' in v else v + '.0'
        d = datetime.datetime.strptime(s, '%Y-%m-%dT%H:%M:%S.%f') - datetime.datetime(1970, 1, 1)
        return (d.days * 86400 + d.seconds) * 1000 + d.microseconds // 1000
    if b in ('float', 'double'): return float(v)
    if isinstance(v, (dict, list)): return dumps(v, (', ', ': '))
    return v
def dbz(r):
    t = r['table']
    rs = {'type': 'struct', 'optional': True, 'name': 'srv.%s.%s.Value' % (db, t),
          'fields': [field(t, c) for c in cols[t]]}
    src = {'type': 'struct', 'optional': False, 'name': 'io.debezium.connector.mysql.Source',
           'field': 'source', 'fields': [{'type': ty, 'optional': o, 'field': n} for n, ty, o in (
               ('connector', 'string', False), ('db', 'string', True), ('table', 'string', True),
               ('file', 'string', False), ('pos', 'int64', False), ('row', 'int32', False))]}
    schema = {'type': 'struct', 'optional': False, 'name': 'srv.%s.%s.Envelope' % (db, t), 'fields': [
        dict(rs, field='before'), dict(rs, field='after'), src,
        {'type': 'string', 'optional': False, 'field': 'op'}]}
    img = lambda i: None if i is None else {c: dval(t, c, i[c]) for c in cols[t]}
    return dumps({'schema': schema, 'payload': {
        'before': img(r['before']), 'after': img(r['after']),
        'source': {'connector': 'mysql', 'db': db, 'table': t, 'file': r['pos']['file'],
                   'pos': r['pos']['pos'], 'row': r['row']},
        'op': {'insert': 'c', 'update': 'u', 'delete': 'd'}[r['type']]}})
# Maxwell: typed values
def mval(t, c, v):
    if v is None: return None
    b = base(types[(t, c)])
    if isinstance(v, (dict, list)): return dumps(v, (', ', ': '))
    if b in ('datetime', 'timestamp'): return v.replace('T', ' ').rstrip('Z')
    return v
def maxwell(r, xoffset, last):
    t = r['table']
    img = lambda i: {c: mval(t, c, i[c]) for c in cols[t]}
    m = {'database': db, 'table': t, 'type': r['type'], 'ts': 1700000000,
         'xid': 1000 + int(r['pos']['pos']), 'position': '%s:%s' % (r['pos']['file'], r['pos']['pos']),
         'server_id': 1, 'xoffset': xoffset}
    if last: m['commit'] = True
    m['data'] = img(r['after'] if r['after'] is not None else r['before'])
    if r['type'] == 'update':
        a, b = img(r['after']), img(r['before'])
        m['old'] = {c: b[c] for c in cols[t] if a[c] != b[c]}
    return dumps(m)
# canal: consecutive rows of one table, kind and event in one message (<= 20)
mid = int(first_id)
with open(out + '/canal.kv', 'w', encoding='utf-8') as f:
    batch = []
    def flush():
        global mid
        if batch:
            print('%s.%s\t%s' % (db, batch[0]['table'], canal(batch, mid)), file=f)
            mid += 1
            batch.clear()
    for r in rows:
        if batch and (len(batch) == 20 or (r['table'], r['type'], r['pos']) !=
                      (batch[0]['table'], batch[0]['type'], batch[0]['pos'])):
            flush()
        batch.append(r)
    flush()
# as Debezium's MySQL connector writes them: a delete is followed by a
# tombstone of its key (an empty value: kcat -Z makes it a null value), and
# an update of the primary key is a delete of the old key (and its
# tombstone) and a create of the new one, each keyed by its own key
with open(out + '/debezium.kv', 'w', encoding='utf-8') as f:
    last, n = None, 0
    dkey = lambda r, img: dumps({'table': r['table'], **{c: img[c] for c in pks[r['table']]}})
    for r in rows:
        n = n + 1 if r['pos'] == last else 0
        last = r['pos']
        r['row'] = n
        t = r['table']
        if r['type'] == 'update' and any(r['before'][c] != r['after'][c] for c in pks[t]):
            d = dict(r, type='delete', after=None)
            print('%s\t%s' % (dkey(r, r['before']), dbz(d)), file=f)
            print('%s\t' % dkey(r, r['before']), file=f)
            r = dict(r, type='insert', before=None)
        img = r['after'] if r['after'] is not None else r['before']
        print('%s\t%s' % (dkey(r, img), dbz(r)), file=f)
        if r['type'] == 'delete': print('%s\t' % dkey(r, img), file=f)
with open(out + '/maxwell.kv', 'w', encoding='utf-8') as f:
    for i, r in enumerate(rows):
        x = 0 if i == 0 or rows[i - 1]['pos'] != r['pos'] else x + 1
        last = i + 1 == len(rows) or rows[i + 1]['pos'] != r['pos']
        img = r['after'] if r['after'] is not None else r['before']
        key = dumps({'database': db, 'table': r['table'], **{'pk.' + c: img[c] for c in pks[r['table']]}})
        print('%s\t%s' % (key, maxwell(r, x, last)), file=f)
print(mid)
