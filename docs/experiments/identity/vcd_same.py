"""Are two VCD files of one flitwave scenario the same waveforms? The same header, and at
every timestamp the same value changes, whatever their order within it, ignoring the
values of `packet` and `msg` signals (packet-table slots and message numbers: labels that
depend on the order nodes are visited in). Exit 0 if so; else print the first timestamps
that differ and exit 1.

usage: python3 vcd_same.py A.vcd B.vcd
"""
import sys,re
def load(p):
    d={}; t=None; hdr=[]; pk=set()
    for line in open(p):
        line=line.rstrip('\n')
        m=re.match(r'\$var \w+ \d+ (\S+) (packet|msg) ',line)
        if m: pk.add(m.group(1))
        if line.startswith('#'):
            t=int(line[1:]); d.setdefault(t,[]); continue
        if t is None: hdr.append(line); continue
        if not line or line.startswith("$"): d[t].append(line); continue
        ident=line[1:] if line[0] in "01xz" else line.split(" ",1)[1]
        if ident in pk: continue
        d[t].append(line)
    return hdr,{k:sorted(v) for k,v in d.items() if v}
ha,a=load(sys.argv[1]); hb,b=load(sys.argv[2])
bad=0
if ha!=hb: print("header differs"); bad=1
for t in sorted(set(a)|set(b)):
    if a.get(t)!=b.get(t):
        sa=set(a.get(t,[])); sb=set(b.get(t,[]))
        print(t, "only a:", sorted(sa-sb)[:6], "only b:", sorted(sb-sa)[:6]); bad+=1
        if bad>5: break
sys.exit(1 if bad else 0)
