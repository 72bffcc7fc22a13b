-- The bundled sample database of plainmcp-sqlite: a small bookshop.
-- Built into sample.db by scripts/build_sample.py; every value is deterministic.

PRAGMA foreign_keys = ON;

CREATE TABLE authors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    born INTEGER
);

CREATE TABLE books (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    genre TEXT NOT NULL,
    published INTEGER NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents > 0),
    stock INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX books_author ON books(author_id);
CREATE INDEX books_genre ON books(genre);

CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    joined TEXT NOT NULL  -- ISO 8601 date
);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    ordered_at TEXT NOT NULL,  -- ISO 8601 date
    status TEXT NOT NULL CHECK (status IN ('placed', 'shipped', 'delivered', 'returned'))
);
CREATE INDEX orders_customer ON orders(customer_id);

CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    book_id INTEGER NOT NULL REFERENCES books(id),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    price_cents INTEGER NOT NULL,
    PRIMARY KEY (order_id, book_id)
) WITHOUT ROWID;

CREATE VIEW book_sales AS
SELECT b.id AS book_id, b.title, a.name AS author,
       coalesce(sum(i.quantity), 0) AS copies_sold,
       coalesce(sum(i.quantity * i.price_cents), 0) AS revenue_cents
FROM books AS b
JOIN authors AS a ON a.id = b.author_id
LEFT JOIN (order_items AS i JOIN orders AS o ON o.id = i.order_id AND o.status <> 'returned')
    ON i.book_id = b.id
GROUP BY b.id;

INSERT INTO authors (id, name, country, born) VALUES
    (1, 'Jane Austen', 'United Kingdom', 1775),
    (2, 'Fyodor Dostoevsky', 'Russia', 1821),
    (3, 'Chinua Achebe', 'Nigeria', 1930),
    (4, 'Gabriel García Márquez', 'Colombia', 1927),
    (5, 'Toni Morrison', 'United States', 1931),
    (6, 'Haruki Murakami', 'Japan', 1949),
    (7, 'Ursula K. Le Guin', 'United States', 1929),
    (8, 'Italo Calvino', 'Italy', 1923),
    (9, 'Wisława Szymborska', 'Poland', 1923),
    (10, 'Naguib Mahfouz', 'Egypt', 1911),
    (11, 'Virginia Woolf', 'United Kingdom', 1882),
    (12, 'Jorge Luis Borges', 'Argentina', 1899);

INSERT INTO books (id, title, author_id, genre, published, price_cents, stock) VALUES
    (1, 'Pride and Prejudice', 1, 'novel', 1813, 899, 14),
    (2, 'Emma', 1, 'novel', 1815, 999, 6),
    (3, 'Persuasion', 1, 'novel', 1817, 849, 3),
    (4, 'Crime and Punishment', 2, 'novel', 1866, 1299, 9),
    (5, 'The Brothers Karamazov', 2, 'novel', 1880, 1599, 4),
    (6, 'Things Fall Apart', 3, 'novel', 1958, 1099, 12),
    (7, 'Arrow of God', 3, 'novel', 1964, 1199, 2),
    (8, 'One Hundred Years of Solitude', 4, 'novel', 1967, 1499, 11),
    (9, 'Love in the Time of Cholera', 4, 'novel', 1985, 1399, 5),
    (10, 'Beloved', 5, 'novel', 1987, 1299, 8),
    (11, 'Song of Solomon', 5, 'novel', 1977, 1249, 0),
    (12, 'Kafka on the Shore', 6, 'novel', 2002, 1399, 7),
    (13, 'Norwegian Wood', 6, 'novel', 1987, 1199, 10),
    (14, 'The Left Hand of Darkness', 7, 'science fiction', 1969, 1099, 6),
    (15, 'The Dispossessed', 7, 'science fiction', 1974, 1149, 5),
    (16, 'A Wizard of Earthsea', 7, 'fantasy', 1968, 999, 13),
    (17, 'Invisible Cities', 8, 'fiction', 1972, 1099, 9),
    (18, 'If on a winter''s night a traveler', 8, 'fiction', 1979, 1199, 4),
    (19, 'View with a Grain of Sand', 9, 'poetry', 1995, 1499, 3),
    (20, 'Palace Walk', 10, 'novel', 1956, 1349, 2),
    (21, 'Mrs Dalloway', 11, 'novel', 1925, 899, 8),
    (22, 'To the Lighthouse', 11, 'novel', 1927, 949, 6),
    (23, 'A Room of One''s Own', 11, 'essay', 1929, 799, 15),
    (24, 'Ficciones', 12, 'short stories', 1944, 1149, 7),
    (25, 'The Aleph', 12, 'short stories', 1949, 1099, 0);

-- 120 customers, with names and cities drawn in turn from short lists.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120),
    first(k, v) AS (VALUES (0, 'Ada'), (1, 'Bram'), (2, 'Chidi'), (3, 'Dana'), (4, 'Emil'), (5, 'Fatima'),
                           (6, 'Goran'), (7, 'Hana'), (8, 'Ines'), (9, 'Jonas'), (10, 'Kemi')),
    last(k, v) AS (VALUES (0, 'Okafor'), (1, 'Silva'), (2, 'Novak'), (3, 'Tanaka'), (4, 'Berg'),
                          (5, 'Haddad'), (6, 'Moreau')),
    city(k, v) AS (VALUES (0, 'Lisbon'), (1, 'Lagos'), (2, 'Osaka'), (3, 'Lyon'), (4, 'Kraków'),
                          (5, 'Montreal'), (6, 'Bogotá'), (7, 'Cairo'))
INSERT INTO customers (id, name, email, city, joined)
SELECT i, f.v || ' ' || l.v, lower(f.v || '.' || l.v) || i || '@example.com', c.v,
       date('2021-01-01', '+' || ((i * 37) % 1000) || ' days')
FROM n
JOIN first AS f ON f.k = i % 11
JOIN last AS l ON l.k = (i * 3) % 7
JOIN city AS c ON c.k = (i * 5) % 8;

-- 400 orders spread over 2023-2024.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400)
INSERT INTO orders (id, customer_id, ordered_at, status)
SELECT i, 1 + (i * 53) % 120, date('2023-01-01', '+' || ((i * 7919) % 730) || ' days'),
       CASE WHEN i % 23 = 0 THEN 'returned' WHEN i > 380 THEN 'placed' WHEN i > 360 THEN 'shipped' ELSE 'delivered' END
FROM n;

-- One to three different books per order, at the book's price.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400),
    slot(s) AS (VALUES (0), (1), (2))
INSERT INTO order_items (order_id, book_id, quantity, price_cents)
SELECT i, b.id, 1 + (i + s) % 3 / 2, b.price_cents
FROM n
JOIN slot ON s <= i % 3
JOIN books AS b ON b.id = 1 + (i * 11 + s * 7) % 25;
