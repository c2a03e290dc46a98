# A stand-in for ssh, first on PATH in tests/core/test_hosts_security.py (the test writes it out
# with this Python's #! line). It records its arguments (FAKE_SSH_LOG), reads them as OpenSSH
# does (options up to `--` or the first word that is not an option), runs a ProxyCommand given
# among the options as OpenSSH would (the attack the tests guard against), and answers the
# destination as FAKE_SSH_ANSWERS says: "ok" (exit 0), "slow" (60 s), else it fails as an
# unreachable host does. It never opens a connection or resolves a name.
import json
import os
import subprocess
import sys
import time

WITH_VALUE = set("BbcDEeFIiJLlmOopQRSWw")
args = sys.argv[1:]
with open(os.environ["FAKE_SSH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
options, i = [], 0
while i < len(args):
    a = args[i]
    if a == "--":
        i += 1
        break
    if not a.startswith("-") or a == "-":
        break
    if a[1:2] in WITH_VALUE and len(a) == 2 and i + 1 < len(args):
        options.append(a + args[i + 1])
        i += 2
        continue
    options.append(a)
    i += 1
for option in options:
    if option.startswith("-oProxyCommand="):
        subprocess.run(option.split("=", 1)[1], shell=True)
destination = args[i] if i < len(args) else None
if destination is None:
    print("usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] destination [command]", file=sys.stderr)
    sys.exit(255)
with open(os.environ["FAKE_SSH_ANSWERS"]) as f:
    how = json.load(f).get(destination, "fail")
if how == "ok":
    sys.exit(0)
if how == "slow":
    time.sleep(60)
host = destination.rpartition("@")[2]
print(f"ssh: connect to host {host} port 22: Connection refused", file=sys.stderr)
sys.exit(255)
