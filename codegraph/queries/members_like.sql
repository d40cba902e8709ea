-- no-member on a class or instance: the members the class really has, inherited ones
-- included (name-mangled members of its bases left out: unreachable), nearest $name first; a
-- small class (40 members or fewer) comes whole, since the real name need not be a spelling
-- neighbour of the invented one. Then a near-miss member of a base the other classes of its
-- module derive from and it does not (`class LoopsTests:` among TestCase classes, calling
-- `self.asserTrue`): the base it may have forgotten. $owner: class qualname or simple name;
-- $name; $limit; $local: member names the candidate itself defines in that class (a class being
-- written has them only in the candidate, not yet in the graph); $forgotten: [{base, user_class}],
-- the resolved bases of the candidate's other classes that the owner's class does not list
WITH found AS (
    SELECT qualname, kind, name, signature, docstring, path, start_line, mro_position, defined_in
    FROM members_of($owner)
    WHERE NOT (starts_with(name, '__') AND NOT ends_with(name, '__') AND mro_position > 0)
    UNION ALL
    SELECT $owner || '.' || n, 'member', n, NULL, NULL, NULL, NULL, -1, $owner
    FROM unnest(CAST($local AS VARCHAR[])) AS t(n)
    WHERE n NOT IN (SELECT name FROM members_of($owner))
), forgotten AS (  -- bases the candidate's other classes derive from and the owner does not
    SELECT f.base, f.user_class FROM (
        SELECT unnest(CAST($forgotten AS STRUCT(base VARCHAR, user_class VARCHAR)[])) AS f)
    WHERE f.base NOT IN (SELECT class_qualname FROM ancestors_of($owner))
)
SELECT * FROM (
    SELECT qualname, kind, name, signature, docstring, path, start_line, NULL AS import_line,
           CASE WHEN name = $name THEN 1.0 ELSE jaro_winkler_similarity(lower(name), lower($name)) END AS score,
           CASE WHEN name = $name THEN 'exact' WHEN jaro_winkler_similarity(lower(name), lower($name)) >= 0.7
                THEN 'fuzzy' ELSE 'scope' END AS match,
           defined_in, NULL AS reason, mro_position
    FROM found
    WHERE jaro_winkler_similarity(lower(name), lower($name)) >= 0.7 OR name = $name
       OR (SELECT count(*) FROM found) <= 40
    UNION ALL
    SELECT m.qualname, m.kind, m.name, m.signature, m.docstring, m.path, m.start_line, NULL,
           CASE WHEN m.name = $name THEN 0.95 ELSE jaro_winkler_similarity(lower(m.name), lower($name)) - 0.05 END,
           CASE WHEN m.name = $name THEN 'exact' ELSE 'fuzzy' END, m.defined_in,
           'a member of ' || f.base || ', which ' || f.user_class || ' derives from and ' || $owner
               || ' does not: a missing base class?', 1000 + m.mro_position
    FROM forgotten f, LATERAL (SELECT * FROM members_of(f.base)) m
    WHERE m.class = f.base AND NOT starts_with(m.name, '_') AND m.name NOT IN (SELECT name FROM found)
      AND (m.name = $name OR jaro_winkler_similarity(lower(m.name), lower($name)) >= 0.9)
    QUALIFY row_number() OVER (ORDER BY jaro_winkler_similarity(lower(m.name), lower($name)) DESC, m.qualname) <= 3
)
ORDER BY score DESC, mro_position, qualname
LIMIT $limit;
