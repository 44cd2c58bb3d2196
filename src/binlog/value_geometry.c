/* value_geometry: a GEOMETRY value's WKB → GeoJSON (the JSON form of
 * value.c; the text form is the same JSON text).
 *
 * Point, LineString, Polygon, their Multi- forms and GeometryCollection,
 * either byte order, nested at most 32 deep. Every count is bounds-checked
 * against the value's length: a malformed WKB is an error, never a read
 * outside it. */
#include "binlog/value_int.h"

static int wkb_coords(jsonw *w, const uint8_t *p, size_t n, size_t *off, bool le, uint32_t npts) {
    jw_arr_open(w);
    for (uint32_t i = 0; i < npts; i++) {
        if (*off + 16 > n) return -1;
        double x, y;
        uint8_t b[16];
        memcpy(b, p + *off, 16);
        if (!le)
            for (int k = 0; k < 8; k++) {
                uint8_t t = b[k]; b[k] = b[7 - k]; b[7 - k] = t;
                t = b[8 + k]; b[8 + k] = b[15 - k]; b[15 - k] = t;
            }
        memcpy(&x, b, 8);
        memcpy(&y, b + 8, 8);
        *off += 16;
        jw_arr_open(w);
        jw_double(w, x);
        jw_double(w, y);
        jw_arr_close(w);
    }
    jw_arr_close(w);
    return 0;
}

static inline uint32_t rd32(const uint8_t *p, bool le) {
    return le ? bl_u32(p) : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int wkb_geom(jsonw *w, const uint8_t *p, size_t n, size_t *off, int depth);

static int wkb_body(jsonw *w, const uint8_t *p, size_t n, size_t *off, bool le, uint32_t type, int depth) {
    uint32_t cnt, rings;
    switch (type) {
    case 1: { /* point: one pair, not an array of pairs */
        if (*off + 16 > n) return -1;
        size_t o = *off;
        jw_arr_open(w);
        for (int k = 0; k < 2; k++) {
            uint8_t b[8];
            memcpy(b, p + o + 8 * k, 8);
            if (!le)
                for (int j = 0; j < 4; j++) { uint8_t t = b[j]; b[j] = b[7 - j]; b[7 - j] = t; }
            double d;
            memcpy(&d, b, 8);
            jw_double(w, d);
        }
        jw_arr_close(w);
        *off += 16;
        return 0;
    }
    case 2:
        if (*off + 4 > n) return -1;
        cnt = rd32(p + *off, le);
        *off += 4;
        return wkb_coords(w, p, n, off, le, cnt);
    case 3:
        if (*off + 4 > n) return -1;
        rings = rd32(p + *off, le);
        *off += 4;
        jw_arr_open(w);
        for (uint32_t r = 0; r < rings; r++) {
            if (*off + 4 > n) return -1;
            cnt = rd32(p + *off, le);
            *off += 4;
            if (wkb_coords(w, p, n, off, le, cnt)) return -1;
        }
        jw_arr_close(w);
        return 0;
    case 4: case 5: case 6:
        if (*off + 4 > n) return -1;
        cnt = rd32(p + *off, le);
        *off += 4;
        jw_arr_open(w);
        for (uint32_t i = 0; i < cnt; i++) {
            if (*off + 5 > n) return -1;
            bool le2 = p[*off] == 1;
            uint32_t t2 = rd32(p + *off + 1, le2);
            *off += 5;
            if (t2 != type - 3 || wkb_body(w, p, n, off, le2, t2, depth + 1)) return -1;
        }
        jw_arr_close(w);
        return 0;
    default:
        return -1;
    }
}

static const char *const geo_names[] = {"", "Point", "LineString", "Polygon", "MultiPoint",
                                        "MultiLineString", "MultiPolygon", "GeometryCollection"};

static int wkb_geom(jsonw *w, const uint8_t *p, size_t n, size_t *off, int depth) {
    if (depth > 32 || *off + 5 > n) return -1;
    bool le = p[*off] == 1;
    uint32_t type = rd32(p + *off + 1, le);
    *off += 5;
    if (type < 1 || type > 7) return -1;
    jw_obj_open(w);
    jw_key(w, "type");
    jw_str(w, geo_names[type]);
    if (type == 7) {
        if (*off + 4 > n) return -1;
        uint32_t cnt = rd32(p + *off, le);
        *off += 4;
        jw_key(w, "geometries");
        jw_arr_open(w);
        for (uint32_t i = 0; i < cnt; i++)
            if (wkb_geom(w, p, n, off, depth + 1)) return -1;
        jw_arr_close(w);
    } else {
        jw_key(w, "coordinates");
        if (wkb_body(w, p, n, off, le, type, depth)) return -1;
    }
    jw_obj_close(w);
    return 0;
}

int bl_wkb_geojson(jsonw *w, const uint8_t *p, size_t n, size_t *off) {
    return wkb_geom(w, p, n, off, 0);
}
