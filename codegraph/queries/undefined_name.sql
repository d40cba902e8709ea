-- undefined-variable: where $name is defined at top level, in the repository or in a library it
-- imports (with the import to use; a module the candidate's module already imports from ranks
-- first among equals), a member of
-- the enclosing class $owner of that name (the code forgot `self.`), a name of a module the
-- candidate's module already imports (`mod.name`), names of the candidate's own module near it,
-- near-miss top-level names anywhere and built-ins, in test code the pytest fixtures it can ask for by a
-- parameter, and near-miss names the code can already read (its
-- function's parameters and bindings, its file's own names: `measurments` for `measurements`; or
-- that share a word with it: `dummy_pager` for the function's own `mock_pager`).
-- $name, $module (the candidate's module), $owner (enclosing class qualname or ''), $function (the
-- function being written: `encode` inside Codec.encode means another encode, not itself), $local
-- (the names bound where the name is read, from the candidate: not in the graph yet), $limit
WITH top AS (  -- the standard library and imported packages too: `ZipFile` is `from zipfile import ZipFile`
    SELECT qualname, kind, name, signature, docstring, path, start_line, module, layer
    FROM all_symbols
    WHERE kind IN ('class', 'function', 'variable') AND qualname = module || '.' || name
      AND (layer = 'project' OR NOT is_private(module))
), spelled AS (  -- the way to import each definition the name can mean: its public path first
    SELECT qualname, import_line, via, rank FROM import_candidates($name) WHERE choice = 1
), fixture AS (  -- in test code, the fixtures it can ask for by a parameter: its module's, its
                   -- conftest.py files' (the package's and those above it), pytest's own
    SELECT * FROM fixtures
    WHERE (regexp_matches($function, '(^|\.)test[^.]*$')
           OR regexp_matches($module, '(^|\.)(test_[^.]*|[^.]*_test|conftest)$'))
      AND (module = $module
           OR (layer = 'project' AND regexp_matches(module, '(^|\.)conftest$')
               AND starts_with($module || '.', regexp_replace(module, 'conftest$', '')))
           OR builtin)
), imported AS (
    SELECT DISTINCT bound_name, resolved_qualname AS module FROM imports
    WHERE module = $module AND scope_qualname = $module AND NOT is_star AND resolution = 'module'
)
SELECT * FROM (
    SELECT t.qualname, t.kind, t.name, t.signature, t.docstring, t.path, t.start_line,
           CASE WHEN t.module = $module THEN NULL ELSE coalesce(s.import_line, 'from ' || t.module || ' import ' || t.name)
           END AS import_line,
           1.0 + 0.01 * (t.module = $module)::INT - 0.005 * (t.layer <> 'project')::INT
               + 0.008 * (t.module IN (SELECT imported_module FROM imports WHERE module = $module))::INT
               + 0.001 * len(list_filter(string_split(t.module, '.'), x -> list_contains(string_split($module, '.'), x)))
               - 0.0001 * length(t.module) AS score,
           'exact' AS match
    FROM top t LEFT JOIN spelled s USING (qualname) WHERE t.name = $name
    UNION ALL
    SELECT qualname, kind, name, signature, docstring, path, start_line,
           'self.' || name || '  (a member of ' || class || ')', 1.005, 'exact'
    FROM members_of($owner) WHERE class = $owner AND name = $name AND kind NOT IN ('classmethod', 'staticmethod')
      AND name <> regexp_extract($function, '[^.]*$')  -- what it overrides or is: itself
    UNION ALL
    SELECT t.qualname, t.kind, t.name, t.signature, t.docstring, t.path, t.start_line,
           imported.bound_name || '.' || t.name || '  (' || imported.bound_name || ' is already imported)', 0.99, 'exact'
    FROM top t JOIN imported ON t.module = imported.module WHERE t.name = $name
    UNION ALL
    SELECT s.qualname, 'import', $name, NULL, NULL, d.path, d.start_line, s.import_line, 0.98, 'exact'
    FROM spelled s JOIN all_symbols d USING (qualname)
    WHERE s.via = 're-export' AND NOT EXISTS (SELECT 1 FROM top WHERE top.name = $name)
    UNION ALL
    SELECT m.qualname, 'module', m.name, NULL, m.docstring, m.path, 1, s.import_line,
           0.97 - 0.005 * (m.layer <> 'project')::INT - 0.001 * s.rank, 'exact'
    FROM all_modules m JOIN spelled s USING (qualname) WHERE m.name = $name
    UNION ALL
    SELECT qualname, kind, name, signature, docstring, path, start_line,
           CASE WHEN module = $module THEN NULL ELSE 'from ' || module || ' import ' || name END,
           jaro_winkler_similarity(lower(name), lower($name)) - 0.05 * (module <> $module)::INT, 'fuzzy'
    FROM top WHERE name <> $name AND layer = 'project' AND jaro_winkler_similarity(lower(name), lower($name)) >= 0.85
    UNION ALL
    SELECT qualname, kind, name, signature, docstring, path, start_line,
           'self.' || name || '  (a member of ' || class || ')',
           jaro_winkler_similarity(lower(name), lower($name)) - 0.02, 'fuzzy'
    FROM members_of($owner) WHERE class = $owner AND name <> $name
      AND jaro_winkler_similarity(lower(name), lower($name)) >= 0.85
    UNION ALL  -- a fixture: the test names it as a parameter (`pytestconfig`, `tmp_path`, conftest's)
    SELECT qualname, 'function', name, signature, docstring, path, start_line,
           'a pytest fixture: add ' || name || ' as a parameter of ' || regexp_extract($function, '[^.]*$'),
           CASE WHEN name = $name THEN 1.02 ELSE greatest(jaro_winkler_similarity(lower(name), lower($name)), 0.8) END,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END
    FROM fixture WHERE name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.85
       OR len(list_intersect(name_words(name), name_words($name))) > 0
    UNION ALL  -- a near-miss built-in (`xrange` for `range`): no import needed
    SELECT qualname, kind, name, signature, docstring, path, start_line, NULL,
           jaro_winkler_similarity(lower(name), lower($name)) - 0.03, 'fuzzy'
    FROM all_symbols WHERE module = 'builtins' AND qualname = 'builtins.' || name AND name <> $name
      AND NOT starts_with(name, '_') AND jaro_winkler_similarity(lower(name), lower($name)) >= 0.85
    UNION ALL
    SELECT n, 'local', n, NULL, NULL, NULL, NULL, NULL,
           greatest(jaro_winkler_similarity(lower(n), lower($name)) + 0.01, 0.8), 'fuzzy'
    FROM unnest(CAST($local AS VARCHAR[])) AS t(n)
    WHERE n <> $name AND (jaro_winkler_similarity(lower(n), lower($name)) >= 0.85
                          OR len(list_intersect(name_words(n), name_words($name))) > 0)
)
ORDER BY score DESC, qualname
LIMIT $limit;
