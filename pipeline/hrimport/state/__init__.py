"""What hrimport remembers between runs, in the state folder (``state_dir``, default ``.hrimport/``).

The state folder is private to its owner (0700, its files 0600: they name staff and their leave)::

    .hrimport/
        state.db             what the service last accepted per person, the files each job step imported
                             (``hrimport.state.store``)
        timeoff_ledger.db    every time-off record the service accepted, so none is added twice
                             (``hrimport.state.ledger``)
        <job>.lock           one run of a job at a time (``hrimport.state.lock``); ``timeoff-ledger.lock``
                             makes the time-off imports sharing a ledger run one at a time

Both databases are opened the same way (``hrimport.state.db``: WAL journal, one busy timeout), so a run
killed at any point leaves them whole and loses nothing they were told. The ledger also syncs every commit
to the disk (``synchronous=FULL``: a power cut loses nothing either); ``state.db`` does not (``NORMAL``: a
power cut may take back its last commits, which only makes the next run send those rows again).
"""
