//! Event-log discovery, tailing, codecs and parsing.
