"""Operations that write: resume (claim + gate), answering a deferred call, migration."""
