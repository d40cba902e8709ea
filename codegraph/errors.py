"""Every error codegraph raises on purpose. The CLI turns them into one clear line each."""


class CodegraphError(Exception):
    """Base class: the message says what went wrong and how to fix it."""


class DatabaseNotFound(CodegraphError):
    pass


class DatabaseLocked(CodegraphError):
    """Another process holds the database file's write lock."""


class DatabaseCorrupt(CodegraphError):
    pass


class SchemaMismatch(CodegraphError):
    pass


class QueryError(CodegraphError):
    pass


class QueryRejected(QueryError):
    """SQL that is not allowed to run (writes, external access, several statements...)."""


class QueryTimeout(QueryError):
    pass


class RepositoryError(CodegraphError):
    pass
