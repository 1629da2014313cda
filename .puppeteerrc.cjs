// Puppeteer must never download its own browser here (no internet): we drive Debian's Chromium.
module.exports = { skipDownload: true };
