# ruff: noqa  (a scratch script as run for the defaultdpmm section; kept as the record)
import json, sys, statistics as st, re
rows=[json.loads(l) for f in sys.argv[1:] for l in open(f)]
def seed(r): return int(re.search(r'-(\d+)/release', r['file']).group(1))
by={}
for r in rows:
    if 'file' in r and '/release/' in r['file']: by.setdefault(r['tag'],{})[seed(r)]=r
pairs=[('main-safe','branch-safe'),('main-draft','branch-draft'),('main-fair','branch-fair'),('main-nyse','branch-nyse'),('main-co2','branch-co2')]
for a,b in pairs:
    if a not in by or b not in by: continue
    common=sorted(set(by[a])&set(by[b]))
    out=[]
    for k in ('tvd_1','tvd_2','tvd_3'):
        x=[by[a][s][k] for s in common]; y=[by[b][s][k] for s in common]; d=[v-u for u,v in zip(x,y)]
        out.append(f"{k} {st.mean(x):.4f} → {st.mean(y):.4f} (Δ {st.mean(d):+.4f}, sd {st.stdev(d) if len(d)>1 else 0:.4f}, {sum(v<0 for v in d)}/{len(d)} lower)")
    ks=by[a][common[0]]['ks'].keys()
    kso=[f"{c} {st.mean(by[a][s]['ks'][c] for s in common):.4f}→{st.mean(by[b][s]['ks'][c] for s in common):.4f}" for c in ks]
    print(a,'→',b,'seeds',common); print('  ','; '.join(out)); print('   KS:', ', '.join(kso))
