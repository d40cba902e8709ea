-- Java: a member javac cannot find on a type (`symbol: method ad(Item)`, `location: variable cart
-- of type Cart`), one to implement, or one the code may not use: the members the type really has,
-- inherited ones included, nearest $name first; a small type (40 members or fewer) comes whole;
-- then a static member of that very name in another class of the repository (`Limits.MAX` read
-- through `Sizes`): first those of the type the code expects there ($expected: a simple name, or
-- NULL), the field's declared type or its class being it or deriving from it (`Writer out =
-- Wrong.INSTANCE`: ClosedWriter's INSTANCE, not ClosedInputStream's), then those whose class
-- shares more words with the name the value is given to ($near: `EMPTY_ORDERED_ITERATOR =`, or
-- the method that returns it: EmptyOrderedIterator's INSTANCE), then the classes nearest the owner. A method called with $args (javac's argument types, simple
-- names) ranks higher when it takes that many, higher still when it takes those types: what the
-- call can mean whatever its name (`out.amount(s)` for `out.value(s)`; $accepts: per argument, the
-- parameter types it converts to by widening or boxing), and a name sharing a word with the
-- invented one higher than one that does not (`followingNull` for `nextNull`). The static members of the
-- classes the file imports statically ($also) are the code's too.
-- The JDK's members also come in $external, from the JDK's list: a graph built without the library
-- layer (--no-libraries) has no rows for them.
-- $owner: the type's qualname; $name; $args: VARCHAR[] or NULL (not a call); $accepts: VARCHAR[][];
-- $also: qualnames; $expected: VARCHAR or NULL; $near: VARCHAR or NULL;
-- $local: member names the candidate itself defines in that type (not in the graph yet);
-- $external: [{name, kind, signature, qualname, defined_in, simple}]; $limit
WITH graph AS (
    SELECT qualname, kind, name, signature, annotation, docstring, path, start_line, mro_position, defined_in
    FROM members_of($owner) WHERE (name <> '<init>') = ($name <> '<init>') AND (name <> '<init>' OR defined_in = $owner)
), found AS (
    SELECT * FROM graph
    UNION ALL
    SELECT m.qualname, m.kind, m.name, m.signature, m.annotation, m.docstring, m.path, m.start_line, 50,
           m.class_qualname
    FROM all_members m WHERE list_contains(CAST($also AS VARCHAR[]), m.class_qualname)
      AND m.kind IN ('staticmethod', 'class_attribute') AND m.qualname NOT IN (SELECT qualname FROM graph)
    UNION ALL
    SELECT e.qualname, e.kind, e.name, e.signature, NULL, NULL, NULL, NULL, 100, e.defined_in
    FROM (SELECT unnest(CAST($external AS STRUCT(name VARCHAR, kind VARCHAR, signature VARCHAR, qualname VARCHAR,
                                                 defined_in VARCHAR, simple VARCHAR)[])) AS e)
    WHERE e.qualname NOT IN (SELECT qualname FROM graph) AND (e.name <> '<init>') = ($name <> '<init>')
      AND (e.name <> '<init>' OR e.defined_in = $owner)
    UNION ALL
    SELECT $owner || '.' || n, 'member', n, NULL, NULL, NULL, NULL, NULL, -1, $owner
    FROM unnest(CAST($local AS VARCHAR[])) AS t(n)
    WHERE n NOT IN (SELECT name FROM graph)
)
SELECT * FROM (
    SELECT qualname, kind, name, coalesce(signature, ': ' || annotation) AS signature, docstring, path, start_line,
           NULL AS import_line,
           CASE WHEN name = $name THEN 1.0 ELSE jaro_winkler_similarity(lower(name), lower($name))
               + 0.2 * len(list_intersect(name_words(name), name_words($name)))
                     / greatest(len(name_words($name)), 1) END
               + CASE WHEN $args IS NULL OR kind NOT IN ('method', 'staticmethod') OR name = $name THEN 0
                      WHEN params = CAST($args AS VARCHAR[]) THEN 0.3
                      WHEN len(params) = len(CAST($args AS VARCHAR[]))
                           AND list_bool_and(list_transform(params, (p, i) -> list_contains(
                               CAST($accepts AS VARCHAR[][])[i], p) OR p = 'T' OR len(p) = 1)) THEN 0.25
                      WHEN len(params) = len(CAST($args AS VARCHAR[])) THEN 0.15 ELSE 0 END AS score,
           CASE WHEN name = $name THEN 'exact' WHEN jaro_winkler_similarity(lower(name), lower($name)) >= 0.7
                THEN 'fuzzy' ELSE 'scope' END AS match,
           defined_in, mro_position, NULL AS reason
    FROM (SELECT *, list_filter(string_split(regexp_extract(qualname, '\(([^()]*)\)$', 1), ','), p -> p <> '')
                    AS params FROM found)
    WHERE jaro_winkler_similarity(lower(name), lower($name)) >= 0.7 OR name = $name
       OR (SELECT count(*) FROM found) <= 40
       OR ($args IS NOT NULL AND kind IN ('method', 'staticmethod')
           AND len(params) = len(CAST($args AS VARCHAR[])))
    UNION ALL
    SELECT qualname, kind, name, coalesce(signature, ': ' || annotation), docstring, path, start_line, NULL,
           CASE WHEN fits THEN 1.25 ELSE 0.95 END + 0.01 * shared, 'exact', class_qualname, 1000,
           'the same name, static, in ' || class_qualname || CASE WHEN fits THEN ', of the type expected there'
                                                                  ELSE '' END
    FROM (SELECT *, $expected IS NOT NULL AND (
                     regexp_extract(regexp_replace(coalesce(annotation, ''), '<.*$', ''), '([\w$]+)\s*$', 1)
                         IN (SELECT $expected UNION ALL SELECT split_part(qualname, '.', -1)
                                                       FROM subclasses_of($expected))
                     OR class_qualname IN (SELECT $expected UNION ALL SELECT qualname FROM subclasses_of($expected))
                     OR split_part(class_qualname, '.', -1) = $expected) AS fits,
                 len(list_intersect(name_words(split_part(class_qualname, '.', -1)),
                                    name_words(coalesce($near, '')))) AS shared
          FROM all_members
          WHERE name = $name AND kind IN ('class_attribute', 'staticmethod') AND ends_with(path, '.java')
            AND layer = 'project'  -- not the JDK's dozen static `decode`s for a project's invented `decode`
            AND class_qualname NOT IN (SELECT defined_in FROM found WHERE defined_in IS NOT NULL))
    QUALIFY row_number() OVER (ORDER BY fits DESC, shared DESC,
        len(list_intersect(string_split(class_qualname, '.'), string_split($owner, '.'))) DESC, qualname) <= 5
)
ORDER BY score DESC, mro_position, qualname
LIMIT $limit;
