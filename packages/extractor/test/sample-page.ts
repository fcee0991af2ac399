/**
 * A realistic article page for tests and the parser benchmark: about 30 KB,
 * 100 links in nav, body and footer, inline script and style, comments,
 * entities, images and forms, as a CMS would emit it.
 */
export function samplePage(): string {
  const nav = Array.from(
    { length: 30 },
    (_, i) => `<li class="nav-item"><a class="nav-link" href="/section/${i}/">Section ${i}</a></li>`,
  ).join('\n');
  const paragraphs = Array.from({ length: 40 }, (_, i) => {
    const link =
      i % 3 === 0
        ? `<a href="https://other-${i}.example.org/path?ref=a&amp;utm_source=b">external ${i}</a>`
        : `<a href="../articles/${i}.html#c" rel="${i % 4 === 1 ? 'nofollow' : 'bookmark'}">article ${i}</a>`;
    return `<p class="body-text">Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor
incididunt ut labore et dolore magna aliqua &mdash; ${link}. Ut enim ad minim veniam, quis nostrud exercitation
ullamco laboris nisi ut aliquip ex ea commodo consequat. <img src="/img/${i}.jpg" alt="picture ${i}" width="300" height="200">
<em>Duis aute</em> irure dolor in <strong>reprehenderit</strong> in voluptate velit esse cillum dolore eu fugiat
nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim.</p>`;
  }).join('\n');
  const related = Array.from({ length: 20 }, (_, i) => `<li><a href="/related/${i}?page=2">Related ${i}</a></li>`).join('');
  const footer = Array.from({ length: 10 }, (_, i) => `<a href="/legal/${i}">Legal ${i}</a>`).join(' | ');
  return `<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>  Sample   article &amp; more
 | Example News</title>
<meta name="description" content="A sample article used to measure parsing speed.">
<link rel="canonical" href="https://news.example.com/articles/sample">
<link rel="stylesheet" href="/static/site.css">
<style>body { font-family: sans-serif; } .nav-link { color: #333; } .body-text { line-height: 1.5; }</style>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} if (1 < 2) { gtag('js', new Date()); }</script>
</head>
<body class="article">
<!-- header -->
<header><nav><ul class="nav">
${nav}
</ul></nav></header>
<main><article>
<h1 class="headline">Sample article</h1>
${paragraphs}
<form action="/search"><input type="text" name="q"><button>Search</button></form>
</article>
<aside><h2>Related</h2><ul>${related}</ul></aside>
</main>
<footer>${footer} <a href="mailto:editor@example.com">Contact</a> <a href="javascript:void(0)">Top</a></footer>
</body>
</html>
`;
}
