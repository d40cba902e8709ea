-- Java: a call javac cannot apply to its arguments (cant.apply.symbol(s)): every overload of the
-- method (or, for $name '<init>', every constructor of the type itself) with its parameters and,
-- when short, its source; the JDK's from $external.
-- $owner: the type's qualname; $name; $external: [{name, kind, signature, qualname, defined_in, simple}]; $limit
WITH graph AS (
    SELECT m.qualname, m.kind, m.name, m.signature, m.docstring, m.path, m.start_line, m.mro_position, m.defined_in
    FROM members_of($owner) m WHERE m.name = $name AND (m.name <> '<init>' OR m.defined_in = $owner)
)
SELECT g.qualname, g.kind, g.name, g.signature, g.docstring, g.path, g.start_line, NULL AS import_line,
       1.0 - 0.001 * g.mro_position AS score, 'exact' AS match, g.defined_in,
       (SELECT list(p.annotation || ' ' || p.name ORDER BY p.position) FROM all_parameters p WHERE p.owner_id = s.id)
           AS parameters,
       CASE WHEN s.end_line - s.start_line <= 12 THEN s.source END AS source
FROM graph g LEFT JOIN all_members s ON s.qualname = g.qualname
UNION ALL
SELECT e.qualname, e.kind, e.name, e.signature, NULL, NULL, NULL, NULL, 0.9, 'exact', e.defined_in, NULL, NULL
FROM (SELECT unnest(CAST($external AS STRUCT(name VARCHAR, kind VARCHAR, signature VARCHAR, qualname VARCHAR,
                                             defined_in VARCHAR, simple VARCHAR)[])) AS e)
WHERE e.name = $name AND e.qualname NOT IN (SELECT qualname FROM graph) AND (e.name <> '<init>' OR e.defined_in = $owner)
ORDER BY score DESC, qualname
LIMIT $limit;
