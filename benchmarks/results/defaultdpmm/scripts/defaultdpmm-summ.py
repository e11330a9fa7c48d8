# ruff: noqa  (a scratch script as run for the defaultdpmm section; kept as the record)
import json, sys, statistics as st, collections
rows=[json.loads(l) for f in sys.argv[1:] for l in open(f)]
g=collections.defaultdict(list)
for r in rows: g[r['tag'] if not r['tag'].startswith('floor') else r['tag']].append(r)
def ms(x): return f"{st.mean(x):.4f}±{(st.stdev(x) if len(x)>1 else 0):.4f}"
for tag,rs in g.items():
    pairs=rs[0]['by_2'].keys()
    print(f"{tag:40s} n={len(rs)} t1 {ms([r['tvd_1'] for r in rs])} t2 {ms([r['tvd_2'] for r in rs])} t3 {ms([r['tvd_3'] for r in rs])}")
    print("   pairs:", {p: round(st.mean([r['by_2'][p] for r in rs]),4) for p in sorted(pairs)})
    print("   1way:", {p: round(st.mean([r['by_1'][p] for r in rs]),4) for p in sorted(rs[0]['by_1'])}, "KS:", {c: round(st.mean([r['ks'][c] for r in rs]),4) for c in rs[0]['ks']}, "mass:", {c: round(st.mean([r['mass'][c] for r in rs]),4) for c in rs[0]['mass']}, "real", rs[0]['real_mass'])
