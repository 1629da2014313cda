"""Runs a command as an unprivileged user under a seccomp profile in the OCI JSON form that kubelet and
container runtimes read, the way a pod with `seccompProfile: Localhost`, `runAsUser` and
`allowPrivilegeEscalation: false` would (libseccomp sets no_new_privs before loading the filter).

    /usr/bin/python3 tests/helpers/seccomp-exec.py <profile.json> <user> <command> [args...]

Needs Debian's python3-seccomp (scripts/setup.sh installs it). Names libseccomp does not know on
this architecture are skipped, as runtimes do.
"""
import json
import os
import pwd
import sys

import seccomp

OPS = {
    'SCMP_CMP_NE': seccomp.NE,
    'SCMP_CMP_EQ': seccomp.EQ,
    'SCMP_CMP_MASKED_EQ': seccomp.MASKED_EQ,
    'SCMP_CMP_LT': seccomp.LT,
    'SCMP_CMP_LE': seccomp.LE,
    'SCMP_CMP_GT': seccomp.GT,
    'SCMP_CMP_GE': seccomp.GE,
}

profile_path, user, *command = sys.argv[1:]
with open(profile_path, encoding='utf-8') as source:
    profile = json.load(source)
if profile['defaultAction'] != 'SCMP_ACT_ERRNO':
    sys.exit('only profiles whose default action is SCMP_ACT_ERRNO are supported')
errno = profile.get('defaultErrnoRet', 1)
syscall_filter = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno))
for rule in profile['syscalls']:
    action = seccomp.ALLOW if rule['action'] == 'SCMP_ACT_ALLOW' else seccomp.ERRNO(rule.get('errnoRet', errno))
    args = [seccomp.Arg(a['index'], OPS[a['op']], a['value'], *([a['valueTwo']] if 'valueTwo' in a else [])) for a in rule.get('args', [])]
    for name in rule['names']:
        try:
            syscall_filter.add_rule(action, name, *args)
        except (RuntimeError, ValueError):
            pass

account = pwd.getpwnam(user)
os.setgroups([])
os.setgid(account.pw_gid)
os.setuid(account.pw_uid)
syscall_filter.load()
os.execv(command[0], command)
