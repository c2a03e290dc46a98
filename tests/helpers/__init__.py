"""What several test modules share: fixtures, builders, stand-ins and real records' readers.
A test module imports these from here, never from another test module
(tests/test_suite_shape.py checks it)."""
