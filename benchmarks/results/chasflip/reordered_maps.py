"""chasflip's check (as run): data-read-draft releases whose coarse map has as many cells as the
fine one but reordered. Arguments: CACHE:TABLE (a suite cache holding suite/TABLE/job-draft-aim-eps1.yaml)."""
import pathlib
import sys

import numpy as np
import yaml

from synthpriv.config import load_job
from synthpriv.marginals.compress import is_identity
from synthpriv.model_store import load_model
from synthpriv.runner import run_job

for spec in sys.argv[1:]:
    cache, table = spec.split(':')
    src = pathlib.Path(cache) / 'suite' / table / 'job-draft-aim-eps1.yaml'
    cfg = yaml.safe_load(src.read_text())
    for seed in (1, 2):
        cfg.update(seed=seed, output={'dir': f'/tmp/lead-maps/{table}-{seed}'}, evaluation={'enabled': False})
        p = pathlib.Path(f'/tmp/lead-maps/{table}.yaml')
        p.write_text(yaml.safe_dump(cfg))
        run_job(load_job(p), force=True, evaluate=False)
        m = load_model(f'/tmp/lead-maps/{table}-{seed}')
        bad = [a for a, mp in (m.coarsening.maps.items() if m.coarsening else [])
               if len(np.unique(mp)) == len(mp) and not is_identity(mp)]
        print(table, seed, 'reordered same-size maps:', bad, flush=True)
