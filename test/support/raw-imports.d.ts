// A Markdown file imported with Vite's `?raw` suffix (the workerd tests read README.md's tables this way: workerd has
// no file system).
declare module "*.md?raw" {
  const text: string;
  export default text;
}
