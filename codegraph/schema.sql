-- codegraph schema. The version lives in meta('schema_version'); bump SCHEMA_VERSION in db.py
-- whenever this file changes, and an older database is rebuilt rather than misread.
-- Ids are stable 63-bit hashes of (path, kind, qualname): the same symbol keeps its id across runs.

CREATE TABLE meta (
    key VARCHAR NOT NULL,      -- schema_version, tool_version, repo_root, indexed_at, ...
    value VARCHAR
);

CREATE TABLE files (
    file_id BIGINT NOT NULL,
    path VARCHAR NOT NULL,     -- relative to the repository root, forward slashes
    module VARCHAR NOT NULL,   -- the dotted name Python imports the file as
    sha256 VARCHAR NOT NULL,
    size BIGINT,
    mtime_ns BIGINT,
    lines INTEGER,
    parse_errors INTEGER       -- tree-sitter ERROR/MISSING nodes; > 0 means partly recovered
);

CREATE TABLE skipped_files (
    path VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,   -- binary | undecodable | too-large | symlink | unreadable | ...
    detail VARCHAR,
    size BIGINT,               -- with mtime_ns: an unchanged skipped file is not read again
    mtime_ns BIGINT
);

CREATE TABLE modules (
    id BIGINT NOT NULL,
    file_id BIGINT NOT NULL,
    name VARCHAR NOT NULL,     -- last component
    qualname VARCHAR NOT NULL, -- json.decoder
    path VARCHAR NOT NULL,
    is_package BOOLEAN,
    docstring VARCHAR,
    all_names VARCHAR[],       -- __all__ when it is a literal list (NULL when absent)
    start_line INTEGER,
    end_line INTEGER
);

CREATE TABLE classes (
    id BIGINT NOT NULL,
    file_id BIGINT NOT NULL,
    name VARCHAR NOT NULL,
    qualname VARCHAR NOT NULL,        -- json.decoder.JSONDecoder; nested: mod.f.<locals>.C
    module VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    scope_qualname VARCHAR,           -- the module, class or function it is defined in
    start_line INTEGER,
    end_line INTEGER,
    bases VARCHAR[],                  -- as written
    base_qualnames VARCHAR[],         -- resolved, NULL entries where unresolved
    decorators VARCHAR[],
    docstring VARCHAR,
    source VARCHAR
);

CREATE TABLE members (
    id BIGINT NOT NULL,
    file_id BIGINT NOT NULL,
    class_id BIGINT NOT NULL,
    class_qualname VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    qualname VARCHAR NOT NULL,
    module VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,    -- method | classmethod | staticmethod | property | class_attribute | instance_attribute
    signature VARCHAR,        -- "(self, s, idx=0)" for callables
    annotation VARCHAR,       -- attributes: the annotation as written
    value VARCHAR,            -- attributes: the assigned expression (first assignment), shortened
    decorators VARCHAR[],
    is_async BOOLEAN,
    start_line INTEGER,
    end_line INTEGER,
    docstring VARCHAR,
    source VARCHAR
);

CREATE TABLE globals (
    id BIGINT NOT NULL,
    file_id BIGINT NOT NULL,
    name VARCHAR NOT NULL,
    qualname VARCHAR NOT NULL,
    module VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,    -- function | variable
    signature VARCHAR,
    annotation VARCHAR,
    value VARCHAR,
    decorators VARCHAR[],
    is_async BOOLEAN,
    start_line INTEGER,
    end_line INTEGER,
    docstring VARCHAR,
    source VARCHAR
);

CREATE TABLE nested_functions (
    id BIGINT NOT NULL,
    file_id BIGINT NOT NULL,
    name VARCHAR NOT NULL,
    qualname VARCHAR NOT NULL,        -- mod.outer.<locals>.inner
    module VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    scope_qualname VARCHAR NOT NULL,
    signature VARCHAR,
    decorators VARCHAR[],
    is_async BOOLEAN,
    start_line INTEGER,
    end_line INTEGER,
    docstring VARCHAR,
    source VARCHAR
);

CREATE TABLE parameters (
    file_id BIGINT NOT NULL,
    owner_id BIGINT NOT NULL,         -- id in globals, members or nested_functions
    owner_qualname VARCHAR NOT NULL,
    position INTEGER NOT NULL,        -- 0-based, self included
    name VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,            -- positional-only | positional | var-positional | keyword-only | var-keyword
    annotation VARCHAR,
    default_value VARCHAR
);

CREATE TABLE imports (
    file_id BIGINT NOT NULL,
    module VARCHAR NOT NULL,          -- the importing module
    path VARCHAR NOT NULL,
    scope_qualname VARCHAR NOT NULL,  -- the module, or the function holding a local import
    line INTEGER,
    imported_module VARCHAR,          -- absolute (relative imports resolved): "json.decoder"
    name VARCHAR,                     -- from-imports: the imported name; '*' for star imports
    alias VARCHAR,
    level INTEGER,                    -- leading dots of a relative import
    is_star BOOLEAN,
    bound_name VARCHAR,               -- the local name the statement binds
    target VARCHAR,                   -- what that name stands for, as a dotted path
    resolved_module VARCHAR,          -- imported_module when it is a module of this repository
    resolved_qualname VARCHAR,        -- the definition in this repository the name ends at
    resolution VARCHAR                -- module | definition | NULL (outside the repository)
);

CREATE TABLE calls (
    file_id BIGINT NOT NULL,          -- join files for the path and module
    caller_id BIGINT,                 -- the enclosing function, class or module
    caller_qualname VARCHAR NOT NULL,
    line INTEGER,
    col INTEGER,                      -- 0-based, of the callee expression
    end_line INTEGER,
    end_col INTEGER,
    callee_text VARCHAR NOT NULL,     -- "self.parse_object", "json.loads", "f(x).g"
    callee_name VARCHAR,              -- last identifier: "loads"
    resolved_callee VARCHAR,          -- qualname of the definition; for external, the dotted import path
    resolution VARCHAR                -- local | import | self | super | builtin | external | NULL
);

CREATE TABLE inheritance (
    file_id BIGINT NOT NULL,
    class_id BIGINT NOT NULL,
    class_qualname VARCHAR NOT NULL,
    module VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    base_text VARCHAR NOT NULL,
    resolved_base VARCHAR,            -- class qualname, or builtins.X
    resolution VARCHAR
);

-- One row per definition: "where is X defined" is one query.
CREATE VIEW symbols AS
    SELECT id, 'module' AS kind, name, qualname, qualname AS module, NULL::VARCHAR AS class_qualname,
           path, start_line, end_line, NULL::VARCHAR AS signature, docstring, file_id
    FROM modules
    UNION ALL
    SELECT id, 'class', name, qualname, module, NULL, path, start_line, end_line,
           '(' || array_to_string(bases, ', ') || ')', docstring, file_id
    FROM classes
    UNION ALL
    SELECT id, kind, name, qualname, module, class_qualname, path, start_line, end_line,
           coalesce(signature, CASE WHEN annotation IS NOT NULL THEN ': ' || annotation END), docstring, file_id
    FROM members
    UNION ALL
    SELECT id, kind, name, qualname, module, NULL, path, start_line, end_line,
           coalesce(signature, CASE WHEN annotation IS NOT NULL THEN ': ' || annotation END), docstring, file_id
    FROM globals
    UNION ALL
    SELECT id, 'nested_function', name, qualname, module, NULL, path, start_line, end_line,
           signature, docstring, file_id
    FROM nested_functions;

-- CodeQL-style vocabulary, stored in the file so the plain duckdb shell has it too.

-- Classes named cls (simple or qualified name) and every class they inherit from, in method
-- resolution order: depth-first, left to right, keeping the last visit of a class seen twice
-- (which matches C3 on the usual diamonds). mro_position 0 is the class itself.
CREATE MACRO ancestors_of(cls) AS TABLE
    WITH RECURSIVE walk(start_qualname, class_qualname, depth, trail, path_key) AS (
        SELECT qualname, qualname, 0, [qualname], []::INTEGER[] FROM classes WHERE qualname = cls OR name = cls
        UNION ALL
        SELECT w.start_qualname, i.resolved_base, w.depth + 1, list_append(w.trail, i.resolved_base),
               list_append(w.path_key, i.position)
        FROM walk w JOIN inheritance i ON i.class_qualname = w.class_qualname
        WHERE i.resolved_base IS NOT NULL AND NOT list_contains(w.trail, i.resolved_base) AND w.depth < 64
    )
    SELECT start_qualname, class_qualname, min(depth) AS depth,
           row_number() OVER (PARTITION BY start_qualname ORDER BY max(path_key)) - 1 AS mro_position
    FROM walk GROUP BY start_qualname, class_qualname ORDER BY start_qualname, mro_position;

-- Members of a class, inherited ones included; an override hides what it overrides.
CREATE MACRO members_of(cls) AS TABLE
    SELECT a.start_qualname AS class, m.name, m.kind, m.signature, m.class_qualname AS defined_in,
           a.mro_position, m.qualname, m.annotation, m.value, m.docstring, m.path, m.start_line
    FROM ancestors_of(cls) a JOIN members m ON m.class_qualname = a.class_qualname
    QUALIFY row_number() OVER (PARTITION BY a.start_qualname, m.name ORDER BY a.mro_position) = 1
    ORDER BY class, mro_position, m.start_line;

-- Classes deriving from cls, directly or not.
CREATE MACRO subclasses_of(cls) AS TABLE
    WITH RECURSIVE walk(class_qualname, depth, trail) AS (
        SELECT qualname, 0, [qualname] FROM classes WHERE qualname = cls OR name = cls
        UNION ALL
        SELECT i.class_qualname, w.depth + 1, list_append(w.trail, i.class_qualname)
        FROM walk w JOIN inheritance i ON i.resolved_base = w.class_qualname
        WHERE NOT list_contains(w.trail, i.class_qualname) AND w.depth < 64
    )
    SELECT c.qualname, min(w.depth) AS depth, c.path, c.start_line
    FROM walk w JOIN classes c ON c.qualname = w.class_qualname
    WHERE w.depth > 0 GROUP BY ALL ORDER BY depth, c.qualname;

-- The names a module defines at top level, and the names it imports.
CREATE MACRO names_in_module(mod) AS TABLE
    SELECT name, kind, qualname, signature, start_line, 'defined' AS origin
    FROM symbols WHERE module = mod AND kind IN ('class', 'function', 'variable')
      AND qualname = mod || '.' || name
    UNION ALL
    SELECT bound_name, 'import', coalesce(resolved_qualname, target), NULL, line, 'imported'
    FROM imports WHERE module = mod AND scope_qualname = mod AND NOT is_star;

-- Every definition (module, class, member, global, nested function) with this simple name.
CREATE MACRO definitions_named(sym) AS TABLE
    SELECT kind, name, qualname, module, class_qualname, signature, path, start_line, end_line, docstring
    FROM symbols WHERE name = sym ORDER BY qualname;

-- Signature, docstring and parameter names of a qualified name.
CREATE MACRO signature_of(qn) AS TABLE
    SELECT s.kind, s.qualname, s.signature, s.docstring, s.path, s.start_line,
           (SELECT list(p.name ORDER BY p.position) FROM parameters p WHERE p.owner_id = s.id) AS parameters
    FROM symbols s WHERE s.qualname = qn;

-- Calls whose callee resolved to this qualified name, with where they are.
CREATE MACRO callers_of(qn) AS TABLE
    SELECT c.caller_qualname, c.callee_text, f.path, c.line, c.col, c.resolution
    FROM calls c JOIN files f USING (file_id) WHERE c.resolved_callee = qn ORDER BY f.path, c.line;

-- What a function, class body or module calls, resolved where possible.
CREATE MACRO callees_of(qn) AS TABLE
    SELECT callee_text, resolved_callee, resolution, line, col
    FROM calls WHERE caller_qualname = qn ORDER BY line, col;

-- Where a name can be imported from: its defining module, and modules that re-export it.
CREATE MACRO import_candidates(sym) AS TABLE
    SELECT * FROM (
        SELECT 'from ' || module || ' import ' || name AS import_line, qualname, kind, module, 'definition' AS via
        FROM symbols
        WHERE name = sym AND kind IN ('class', 'function', 'variable') AND qualname = module || '.' || name
        UNION ALL
        SELECT 'from ' || module || ' import ' || bound_name, resolved_qualname, 'import', module, 're-export'
        FROM imports
        WHERE bound_name = sym AND scope_qualname = module AND resolved_qualname IS NOT NULL AND NOT is_star
        UNION ALL
        SELECT 'import ' || qualname, qualname, 'module', qualname, 'module'
        FROM modules WHERE name = sym
    ) ORDER BY via = 're-export', length(import_line), import_line;
