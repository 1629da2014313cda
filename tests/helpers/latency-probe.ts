/**
 * Asks a URL again and again (one request at a time) while an attack runs, and keeps the worst
 * time it took to answer: a service whose event loop is held answers /health late, whatever the
 * attack. Stop it to get the figures.
 */
export interface LatencyFigures {
  worstMs: number;
  answered: number;
  failed: number;
}

export function probeLatency(url: string, init: RequestInit = {}, pauseMs = 25): { stop(): Promise<LatencyFigures> } {
  const figures: LatencyFigures = { worstMs: 0, answered: 0, failed: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(url, init);
        await response.arrayBuffer();
        if (response.ok) figures.answered += 1;
        else figures.failed += 1;
      } catch {
        figures.failed += 1;
      }
      figures.worstMs = Math.max(figures.worstMs, Math.round(performance.now() - started));
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return figures;
    },
  };
}
