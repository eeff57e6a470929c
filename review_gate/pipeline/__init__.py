"""The six stages, one module each (``normalize``, ``classify``, ``compose``, ``gap_detect``,
``dispatch``, ``aggregate``), what they are told (``options``) and how what they hand each other
is checked (``boundary``); and what runs them: ``runner`` knows their order, ``bootstrap`` builds
what every caller needs first, and ``arguments`` checks a caller's arguments."""
