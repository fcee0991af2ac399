import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Router } from 'express';

/** Where the overview's charting library (uPlot, MIT) is served from: this dashboard, never a CDN. */
export const CHART_SCRIPT_PATH = '/assets/uplot.min.js';
export const CHART_STYLE_PATH = '/assets/uplot.min.css';

/**
 * uPlot's browser build, read from its package at start. It is no import of
 * this module (it runs in the browser), so the crawlq package's build lists
 * it as a package read at run time (apps/crawlq/build.mjs).
 */
function readUplot(file: string): Buffer {
  return readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${file}`));
}

/** Serves uPlot's script and stylesheet; both cached by the browser for an hour, the same for every namespace. */
export function chartAssets(): Router {
  const script = readUplot('uPlot.iife.min.js');
  const style = readUplot('uPlot.min.css');
  const router = Router();
  router.get(CHART_SCRIPT_PATH, (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'public, max-age=3600').send(script);
  });
  router.get(CHART_STYLE_PATH, (_req, res) => {
    res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(style);
  });
  return router;
}
