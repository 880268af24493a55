"""Session persistence: a session kept in a store under a key, as one state machine over snapshot, log,
catch-up and lease.

Every turn runs on the latest stored state and is saved before its results are returned. What a store
keeps of a session is a snapshot and a log of the changes saved after it (`_log`); a turn appends its
change (the objects it made or read again, the messages it added, the objects it used, the small
fields that moved), and a new snapshot is written only once the log outgrows the last one four times
over, so a call in a session of 10,000 objects writes about what one in a session of 10 does. One
turn on a key runs at a time, across tasks and processes: the lease (`_lease`).

The keeper (`SessionKeeper`) holds one `Standing`: a phase, the stored version it holds, the snapshot
and log it holds, and how much of the context the store holds. The phases and the events between them:

                     open: nothing stored
        ADRIFT ------------------------------> NEW (lease held; `create` runs)
          |  ^                                  |  |
          |  |  the call fails / its save is    |  | first save: a snapshot, version 1
          |  |  refused or lost (lease lost)    |  v
          |  +------------------------------- LEASED <-----+  a load finds the version held: stays
          |                                     ^  |  |    |  (or restores, keeping the lease)
          |  load (open, a turn,                |  |  +----+
          |  catch_up): restore whole           |  |
          v                                     |  | call saved: a change appended to the log, or a
        IN_STEP(N) ---- turn / host save: ------+  | new snapshot once the log outgrew the last one
          |    ^        take the lease, loading    |  (compaction); the lease goes back with the save
          |    |        (a turn) as it is taken    v
          |    +------------------------------- IN_STEP(N+1)
          |
          |  a load finds version M > N (another process wrote: stale):
          |    the store's snapshot is the one held and its log continues the held log, the host's
          |    messages since the last save are intact, and the changes fit the registry
          |        -> catch up: apply only log entries N+1..M (`apply_changes`) -> IN_STEP(M)
          |    otherwise (another writer compacted the log, a rewritten context, damage, a fault)
          |        -> restore whole from snapshot and log -> IN_STEP(M)
          |  a load finds version N: nothing read but the version -> IN_STEP(N)
          +  a load finds nothing: the session is gone (deleted, expired, the store lost it): an
             error that says so; the standing does not change

- ADRIFT: nothing held is known to match the store: not loaded yet, or a turn failed or lost its save.
  The next load restores whole; a host save is refused until then.
- NEW: nothing stored under the key; the lease is held while the session is made, and its save writes
  the first snapshot.
- IN_STEP(N): holds what the store held at version N, snapshot and log alike.
- LEASED: in step and holding the lease for one turn (or one host save); it ends with the save.

A lease is renewed every third of its time while a turn runs; a renewal that fails is only logged, and
a lease lost under a very slow turn shows as the save refused. There is no closed phase: the stored
session outlives the process, and a keeper holds nothing between turns (the lease goes back with
each save).

Invariants:
- Nothing acknowledged is lost: a turn's results are returned only after its save, and every save
  names the version it follows, so it fails (`StoreConflictError`) rather than overwrite another's.
- A failed call changes nothing stored: nothing is saved, and the session, gone ADRIFT, drops at its
  next load what the call changed in memory. Its calls are not run again (mutations run once).
- Two writers never interleave: a turn holds the lease from its load to its save (and the task lock
  within a process); a catch-up reads one atomic load and runs no call.
- A catch-up leaves the session exactly as a whole restore of the same store would.
"""

from ._keeper import Phase, SessionKeeper, Standing
from ._log import Changes, StateEncoder, apply_changes, decode_state, encode_state

__all__ = ["Changes", "Phase", "SessionKeeper", "StateEncoder", "Standing", "apply_changes", "decode_state", "encode_state"]
