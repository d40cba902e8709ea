-- Java: a bare name javac cannot find in a class's code (`symbol: variable totl`, `location: class
-- Shop`): the class's fields and methods near it, inherited ones included (the code may mean
-- `this.total`), the names the method binds spelled near it, and a class of that name to import
-- (a name used as a qualifier: `Money.format(...)`), the JDK's from $external.
-- $owner: the enclosing class's qualname ('' when unknown); $name; $package: the candidate's
-- package; $local: the names the method can read; $external: JDK class qualnames; $limit
WITH classes AS (
    SELECT qualname, kind, name, docstring, path, start_line, layer,
           regexp_extract(module, '^(.*)\.[^.]+$', 1) AS package
    FROM all_classes WHERE ends_with(path, '.java') AND NOT contains(qualname, '$')
)
SELECT * FROM (
    SELECT qualname, kind, name, coalesce(signature, ': ' || annotation) AS signature, docstring, path, start_line,
           NULL AS import_line,
           CASE WHEN name = $name THEN 1.0 ELSE jaro_winkler_similarity(lower(name), lower($name)) END AS score,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END AS match
    FROM members_of($owner)
    WHERE $owner <> '' AND name <> '<init>' AND (name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.85)
    UNION ALL
    SELECT qualname, kind, name, NULL, docstring, path, start_line,
           CASE WHEN package NOT IN ($package, 'java.lang') THEN 'import ' || qualname || ';' END,
           CASE WHEN name = $name THEN 0.99 - 0.01 * (layer <> 'project')::INT  -- the library layer's after
                ELSE jaro_winkler_similarity(lower(name), lower($name)) - 0.02 END,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END
    FROM classes WHERE name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.9
    UNION ALL
    SELECT replace(q, '$', '.'), 'class', regexp_extract(q, '([^.$]+)$', 1), NULL, NULL, NULL, NULL,
           CASE WHEN NOT regexp_matches(q, '^java\.lang\.[^.]+$') THEN 'import ' || replace(q, '$', '.') || ';' END,
           0.98, 'exact'
    FROM unnest(CAST($external AS VARCHAR[])) AS t(q) WHERE regexp_extract(q, '([^.$]+)$', 1) = $name
      AND replace(q, '$', '.') NOT IN (SELECT qualname FROM classes)  -- in the graph already (its library layer)
    UNION ALL
    SELECT n, 'local', n, NULL, NULL, NULL, NULL, NULL,
           greatest(jaro_winkler_similarity(lower(n), lower($name)) + 0.01, 0.8), 'fuzzy'
    FROM unnest(CAST($local AS VARCHAR[])) AS t(n)
    WHERE n <> $name AND jaro_winkler_similarity(lower(n), lower($name)) >= 0.85
)
ORDER BY score DESC, qualname
LIMIT $limit;
