-- Views and macros over the tables declared in codegraph/schema.py (their DDL is generated
-- from there, and so is each @@union@@ below: schema.DEFINITION). The schema version is a hash
-- of both, so editing this file rebuilds older databases instead of misreading them.

-- One row per definition of the repository: "where is X defined" is one query.
CREATE VIEW symbols AS
    @@symbols@@;

-- The same, with the library layer (the standard library and the packages the repository
-- imports, in the `library` schema) and a `layer` column: project | stdlib | site.
CREATE VIEW all_symbols AS
    @@all_symbols@@;

-- CodeQL-style vocabulary, stored in the file so the plain duckdb shell has it too.

-- Classes named cls (simple or qualified name) and every class they inherit from, in method
-- resolution order: depth-first, left to right, keeping the last visit of a class seen twice
-- (which matches C3 on the usual diamonds). mro_position 0 is the class itself.
CREATE MACRO ancestors_of(cls) AS TABLE
    WITH RECURSIVE walk(start_qualname, class_qualname, depth, trail, path_key) AS (
        SELECT qualname, qualname, 0, [qualname], []::INTEGER[] FROM all_classes WHERE qualname = cls OR name = cls
        UNION ALL
        SELECT w.start_qualname, i.resolved_base, w.depth + 1, list_append(w.trail, i.resolved_base),
               list_append(w.path_key, i.position)
        FROM walk w JOIN all_inheritance i ON i.class_qualname = w.class_qualname
        WHERE i.resolved_base IS NOT NULL AND NOT list_contains(w.trail, i.resolved_base) AND w.depth < 64
    )
    SELECT start_qualname, class_qualname, min(depth) AS depth,
           row_number() OVER (PARTITION BY start_qualname ORDER BY max(path_key)) - 1 AS mro_position
    FROM walk GROUP BY start_qualname, class_qualname ORDER BY start_qualname, mro_position;

-- Members of a class, inherited ones included (from library classes too); an override hides
-- what it overrides.
CREATE MACRO members_of(cls) AS TABLE
    SELECT a.start_qualname AS class, m.name, m.kind, m.signature, m.class_qualname AS defined_in,
           a.mro_position, m.qualname, m.annotation, m.value, m.docstring, m.path, m.start_line
    FROM ancestors_of(cls) a JOIN all_members m ON m.class_qualname = a.class_qualname
    QUALIFY row_number() OVER (PARTITION BY a.start_qualname, m.name ORDER BY a.mro_position) = 1
    ORDER BY class, mro_position, m.start_line;

-- Classes deriving from cls, directly or not.
CREATE MACRO subclasses_of(cls) AS TABLE
    WITH RECURSIVE walk(class_qualname, depth, trail) AS (
        SELECT qualname, 0, [qualname] FROM all_classes WHERE qualname = cls OR name = cls
        UNION ALL
        SELECT i.class_qualname, w.depth + 1, list_append(w.trail, i.class_qualname)
        FROM walk w JOIN inheritance i ON i.resolved_base = w.class_qualname
        WHERE NOT list_contains(w.trail, i.class_qualname) AND w.depth < 64
    )
    SELECT c.qualname, min(w.depth) AS depth, c.path, c.start_line
    FROM walk w JOIN classes c ON c.qualname = w.class_qualname
    WHERE w.depth > 0 GROUP BY ALL ORDER BY depth, c.qualname;

-- The names a module defines at top level, and the names it imports (any layer: a standard
-- library module's names too).
CREATE MACRO names_in_module(mod) AS TABLE
    SELECT name, kind, qualname, signature, start_line, 'defined' AS origin
    FROM all_symbols WHERE module = mod AND kind IN ('class', 'function', 'variable')
      AND qualname = mod || '.' || name
    UNION ALL
    SELECT bound_name, 'import', coalesce(resolved_qualname, target), NULL, line, 'imported'
    FROM imports WHERE module = mod AND scope_qualname = mod AND NOT is_star;

-- Every definition (module, class, member, global, nested function) with this simple name.
CREATE MACRO definitions_named(sym) AS TABLE
    SELECT kind, name, qualname, module, class_qualname, signature, path, start_line, end_line, docstring
    FROM symbols WHERE name = sym ORDER BY qualname;

-- Signature, docstring and parameter names of a qualified name (any layer).
CREATE MACRO signature_of(qn) AS TABLE
    SELECT s.kind, s.qualname, s.signature, s.docstring, s.path, s.start_line,
           (SELECT list(p.name ORDER BY p.position) FROM all_parameters p WHERE p.owner_id = s.id) AS parameters,
           s.layer
    FROM all_symbols s WHERE s.qualname = qn;

-- Calls in the repository whose callee resolved to this qualified name, with where they are.
CREATE MACRO callers_of(qn) AS TABLE
    SELECT c.caller_qualname, c.callee_text, f.path, c.line, c.col, c.resolution
    FROM calls c JOIN files f USING (file_id) WHERE c.resolved_callee = qn ORDER BY f.path, c.line;

-- What a function, class body or module calls, resolved where possible.
CREATE MACRO callees_of(qn) AS TABLE
    SELECT callee_text, resolved_callee, resolution, line, col
    FROM calls WHERE caller_qualname = qn ORDER BY line, col;

-- Every use of a definition in the repository: calls (`kind` as in calls: call, decorator,
-- implicit, init, property), imports, base classes, and the reads, writes and annotations of refs.
CREATE MACRO references_to(qn) AS TABLE
    SELECT u.kind, u.scope_qualname, f.path, u.line, u.col, u.text, u.resolution FROM (
        SELECT kind, caller_qualname AS scope_qualname, file_id, line, col, callee_text AS text, resolution
        FROM calls WHERE resolved_callee = qn
        UNION ALL
        SELECT 'import', scope_qualname, file_id, line, NULL, coalesce(name, imported_module), resolution
        FROM imports WHERE resolved_qualname = qn
        UNION ALL
        SELECT 'base', h.class_qualname, h.file_id, k.start_line, NULL, h.base_text, h.resolution
        FROM inheritance h JOIN classes k ON k.id = h.class_id WHERE h.resolved_base = qn
        UNION ALL
        SELECT kind, scope_qualname, file_id, line, col, text, resolution FROM refs WHERE resolved_qualname = qn
    ) u JOIN files f USING (file_id)
    ORDER BY f.path, u.line, u.col, u.kind;

-- The methods of subclasses (at any depth) that replace the method qn: what a call of qn on an
-- instance of a subclass runs instead.
CREATE MACRO overrides_of(qn) AS TABLE
    WITH RECURSIVE walk(class_qualname, depth, trail) AS (
        SELECT class_qualname, 0, [class_qualname] FROM all_members WHERE qualname = qn
        UNION ALL
        SELECT i.class_qualname, w.depth + 1, list_append(w.trail, i.class_qualname)
        FROM walk w JOIN inheritance i ON i.resolved_base = w.class_qualname
        WHERE NOT list_contains(w.trail, i.class_qualname) AND w.depth < 64
    )
    SELECT m.qualname, m.class_qualname, min(w.depth) AS depth, m.kind, m.signature, m.path, m.start_line
    FROM walk w JOIN members m ON m.class_qualname = w.class_qualname
    WHERE w.depth > 0 AND m.name = regexp_extract(qn, '[^.]+$')
    GROUP BY ALL ORDER BY depth, m.qualname;

-- What a call of the method qn may run: qn itself and its overrides.
CREATE MACRO implementations_of(qn) AS TABLE
    SELECT qualname, class_qualname, 0 AS depth, kind, signature, path, start_line FROM all_members WHERE qualname = qn
    UNION ALL
    SELECT * FROM overrides_of(qn)
    ORDER BY depth, qualname;

-- Where a name can be imported from: its defining module, and modules that re-export it; the
-- repository's own first, then the standard library and imported packages (`layer`).
CREATE MACRO import_candidates(sym) AS TABLE
    SELECT * FROM (
        SELECT 'from ' || module || ' import ' || name AS import_line, qualname, kind, module, 'definition' AS via,
               layer
        FROM all_symbols
        WHERE name = sym AND kind IN ('class', 'function', 'variable') AND qualname = module || '.' || name
        UNION ALL
        SELECT 'from ' || i.module || ' import ' || i.bound_name, i.resolved_qualname, 'import', i.module, 're-export',
               f.layer
        FROM all_imports i JOIN all_files f USING (file_id)
        WHERE i.bound_name = sym AND i.scope_qualname = i.module AND i.resolved_qualname IS NOT NULL AND NOT i.is_star
          AND (f.layer = 'project' OR NOT starts_with(i.module, '_'))
        UNION ALL
        SELECT 'import ' || qualname, qualname, 'module', qualname, 'module', layer
        FROM all_modules WHERE name = sym
    ) ORDER BY layer <> 'project', via = 're-export', length(import_line), import_line;
