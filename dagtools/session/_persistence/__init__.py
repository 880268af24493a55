"""Session persistence: a session kept in a store under a key, as one state machine over snapshot, log,
catch-up and lease.

Every turn runs on the latest stored state and is saved before its results are returned. What a store
keeps of a session is a snapshot and a log of the changes saved after it (`_log`); a turn appends its
change (the objects it made or read again, the messages it added, the objects it used, the small
fields that moved), and a new snapshot is written only once the log outgrows the last one four times
over, so a call in a session of 10,000 objects writes about what one in a session of 10 does. One
turn on a key runs at a time, across tasks and processes: the lease (`_lease`).

The keeper (`SessionKeeper`) holds one `Standing`: a phase, the stored version it holds, the snapshot
and log it holds, and how much of the context the store holds. Its phases, and the events between them:

                      open finds nothing
           +----------------------------------> NEW ------------+
           |         create fails                |              | first save: a snapshot
           |   +---------------------------------+              v
         ADRIFT <------------------------------ LEASED ------> IN_STEP(N+1)
           |     the call fails; its save is       ^     call saved: a change appended, or a new
           |     refused or lost                   |     snapshot (compaction); the lease goes back
           | load: restore whole                   |     with the save
           v                                       | lease taken (a turn, after its load; a host save)
         IN_STEP(N) -------------------------------+
           |  ^
           +--+ load finds version N: nothing read;
                load finds M > N (stale): catch up on the log, or restore whole -> IN_STEP(M)

    phase       event                                      next        what happens
    ADRIFT      load (open, a turn, catch_up)              IN_STEP(M)  restore whole from snapshot and log
    ADRIFT      open finds nothing stored                  NEW         the lease is held; `create` runs
    ADRIFT      host save                                  ADRIFT      refused: load first (run a call)
    NEW         first save                                 IN_STEP(1)  the first snapshot
    NEW         `create` fails, or its save                ADRIFT      nothing stored
    IN_STEP(N)  load finds version N                       IN_STEP(N)  only the version is read
    IN_STEP(N)  load finds M > N: another process wrote    IN_STEP(M)  catch up: apply only the log after
                (stale)                                                the part held (`apply_changes`),
                                                                       when the store's snapshot is the
                                                                       one held, its log continues the
                                                                       one held, the context was not
                                                                       rewritten and the changes fit;
                                                                       else restore whole (another
                                                                       writer compacted, damage, a fault)
    IN_STEP(N)  lease taken (a turn, a host save)          LEASED(N)
    LEASED(N)   lease renewed (every third of its time)    LEASED(N)   a failed renewal is only logged
    LEASED(N)   load (inside a turn)                       LEASED(M)   as from IN_STEP, keeping the lease
    LEASED(N)   call saved                                 IN_STEP(N+1) a change appended, or a snapshot
                                                                       once the log outgrew the last one
                                                                       four times (compaction); the lease
                                                                       goes back in the same write
    LEASED(N)   the call fails; its save is refused        ADRIFT      nothing saved; `StoreConflictError`
                (lease lost, another writer) or lost                   or the store's error (the calls ran)
    LEASED(N)   its save fails before writing (a fault)    IN_STEP(N)  the store as held; the next save
                                                                       carries this turn's change too
    any         load finds nothing: the session is gone    (same)      an error that says why and what to do

There is no closed phase: the stored session outlives the process, and a keeper holds nothing between
turns (the lease goes back with each save).

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
from ._lease import Lease, hold
from ._log import Changes, StateEncoder, apply_changes, decode_state, encode_state

__all__ = [
    "Changes",
    "Lease",
    "Phase",
    "SessionKeeper",
    "StateEncoder",
    "Standing",
    "apply_changes",
    "decode_state",
    "encode_state",
    "hold",
]
