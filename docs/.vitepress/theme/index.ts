// The default theme without its bundled Inter web font: the site uses the
// reader's system fonts and ships no font files.
import DefaultTheme from 'vitepress/theme-without-fonts';

export default DefaultTheme;
