"""`doctor run --gather`: one merged report for a multi-node Slurm step.

hostlist.py (Slurm host lists), plan.py (who is who, from the step's env),
link.py (the TCPStore transport), merge.py (the run and the merged report).

Every task (one per node) runs its node's checks; the task with SLURM_PROCID 0
merges the reports and writes the only report of the step. The transport is
torch.distributed's TCPStore (c10d's own rendezvous store, the one
`init_process_group` uses) on the first host of the step's node list, at a
port derived from the job and step ids. No gloo collective is used on purpose:
a collective needs every rank, so one dead node would fail it for all, while
the store lets rank 0 merge whatever arrived and name the node that did not.

Torch is imported only here, only when gathering, and in the doctor process
itself (in a background thread that overlaps the checks): the store is a few
C++ threads, nothing that can hang or touch a GPU, and a child process would
add a second rendezvous (parent ↔ child) for no gain.

Per task: connect (rank 0: raise its open-file limit, one socket per node,
then listen) → `hello/<rank>` with its node name, its rank on the `joined`
list → `beat/<rank>` counter bumped every second → run the checks →
`doc/<rank>` (the zlib-compressed, already secret-masked report plus the
node's facts) → its rank on the `sent` list. Rank 0 reads the lists and
fetches documents and heartbeats with one multi-get per scan. It declares a
node missing when it never joined within the timeout, when its heartbeat
stops for a third of it (killed, node down), or when it is still running
`timeout` seconds after rank 0's own checks ended (every node runs the same
checks with the same deadlines). docs/scaling.md has the figures.

Test-only hook: DOCTOR_FAKE_FACTS='{"torch_version": "2.4.0+rocm6.1"}' replaces
this node's gathered facts (see `node_facts`); the node's entry in the report
then lists the faked keys under `fake_facts`, so a faked report is never
mistaken for a real one. DOCTOR_GATHER_TEST_HOLD_S=N makes a task wait N
seconds before it sends its report (the tests kill it meanwhile).
"""
